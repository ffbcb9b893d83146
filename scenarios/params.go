package scenarios

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"popsim/sim"
)

// alias is a short sweep/plan parameter name for an override path; format,
// when set, turns the parameter's value into the override's value, and
// values, when set, lists the words the parameter takes and the value each
// sets.
type alias struct {
	path   string
	format string // fmt verb with one %s, e.g. "poisson(%s)"
	values map[string]string
	help   string
	// also are more overrides the value sets (engine= sets the
	// consumers' kind to the engine's).
	also func(value string) []Override
}

// pathValues are the words of the path alias: RocketMQ's two POP paths,
// chosen as RocketMQ chooses them (popConsumerKVServiceEnable).
var pathValues = map[string]string{"kv": "true", "checkpoint": "false"}

var aliases = map[string]alias{
	"consumers":  {path: "consumers[*].count", help: "clients per consumer entry"},
	"threads":    {path: "consumers[*].threads", help: "consume threads per client"},
	"batch":      {path: "consumers[*].batch", help: "messages per pop, receive or pull"},
	"invisible":  {path: "consumers[*].invisibleTime", help: "invisible time (lease)"},
	"poll":       {path: "consumers[*].pollTime", help: "long-polling time"},
	"kind":       {path: "consumers[*].kind", help: "pop-push, simple or pull"},
	"processing": {path: "consumers[*].processing", help: "processing-time distribution"},
	"outcomes":   {path: "consumers[*].outcomes", help: "listener outcomes"},
	"queues":     {path: "topics[*].queues", help: "queues per topic on each broker"},
	"cores":      {path: "broker.cores", help: "broker cores (the broker cost model; 0: none)"},
	"brokers":    {path: "broker.count", help: "brokers, each with the topics' queues (rocketmq)"},
	"arrivals":   {path: "producers[*].arrivals", help: "arrival process of every producer"},
	"rate":       {path: "producers[*].arrivals", format: "poisson(%s)", help: "Poisson rate of every producer, e.g. 1000/s"},
	"producers":  {path: "producers[*].count", help: "producers per producer entry"},
	"duration":   {path: "duration", help: "safety-phase length"},
	"version":    {path: "engine.version", help: "RocketMQ release profile (pop.Versions)"},
	"engine": {path: "engine.kind", help: "the engine, and its consumers' kind (rocketmq: pop-push)",
		also: func(v string) []Override {
			if k := sim.EngineConsumerKind(v); k != "" {
				return []Override{{Path: "consumers[*].kind", Value: k}}
			}
			return nil
		}},
	"path": {path: "engine.popConsumerKVServiceEnable", values: pathValues,
		help: "RocketMQ's POP path: kv or checkpoint (the default broker's)"},
}

// Aliases returns "name: path — help" lines for the sweep parameters'
// short names, sorted.
func Aliases() []string {
	var out []string
	for _, k := range slices.Sorted(maps.Keys(aliases)) {
		a := aliases[k]
		p := a.path
		if a.format != "" {
			p += "=" + strings.ReplaceAll(a.format, "%s", "VALUE")
		}
		if a.values != nil {
			var ws []string
			for _, w := range slices.Sorted(maps.Keys(a.values)) {
				ws = append(ws, w+":"+a.values[w])
			}
			p += " (" + strings.Join(ws, ",") + ")"
		}
		out = append(out, fmt.Sprintf("%-11s %-37s %s", k, p, a.help))
	}
	return out
}

// ParamOverride returns the override that sets parameter name (an alias
// or any override path) to value.
func ParamOverride(name, value string) (Override, error) {
	if a, ok := aliases[name]; ok {
		if a.values != nil {
			v, ok := a.values[value]
			if !ok {
				return Override{}, fmt.Errorf("parameter %s: %q: want %s", name, value, strings.Join(slices.Sorted(maps.Keys(a.values)), " or "))
			}
			value = v
		}
		if a.format != "" {
			value = fmt.Sprintf(a.format, value)
		}
		return Override{Path: a.path, Value: value}, nil
	}
	o, err := ParseOverride(name + "=" + value)
	if err != nil {
		return Override{}, fmt.Errorf("parameter %q is neither a short name (%s) nor a key path such as consumers[0].count: %v",
			name, strings.Join(slices.Sorted(maps.Keys(aliases)), ", "), err)
	}
	return o, nil
}

// ParamOverrides returns every override that setting parameter name to
// value makes: the alias's own and what it sets with it.
func ParamOverrides(name, value string) ([]Override, error) {
	o, err := ParamOverride(name, value)
	if err != nil {
		return nil, err
	}
	out := []Override{o}
	if a, ok := aliases[name]; ok && a.also != nil {
		out = append(out, a.also(value)...)
	}
	return out, nil
}

// Param is a sweep parameter and its values.
type Param struct {
	Name   string
	Values []string
}

// maxParamValues bounds one parameter's value list.
const maxParamValues = 1000

// ParseParam parses "name=v1,v2,...". Commas inside parentheses belong to
// the value: processing=exp(5ms),uniform(1ms,5ms) has two values. Each
// value is kept in its setting's canonical text form (invisible=10000ms
// is 10s), which is what sweep labels and reports print.
func ParseParam(s string) (Param, error) {
	name, list, ok := strings.Cut(s, "=")
	name = strings.TrimSpace(name)
	if !ok || name == "" || strings.TrimSpace(list) == "" {
		return Param{}, fmt.Errorf("-param %q: want name=value1,value2,..., e.g. consumers=100,200,500 or invisible=10s,60s", s)
	}
	values := splitTop(list)
	if len(values) > maxParamValues {
		return Param{}, fmt.Errorf("-param %q: %d values: want at most %d", s, len(values), maxParamValues)
	}
	seen := map[string]bool{}
	for i, v := range values {
		if v == "" {
			return Param{}, fmt.Errorf("-param %q: an empty value", s)
		}
		o, err := ParamOverride(name, v)
		if err != nil {
			return Param{}, fmt.Errorf("-param %q: %v", s, err)
		}
		if a, ok := aliases[name]; !ok || a.format == "" && a.values == nil {
			v = canonicalValue(o.Path, v)
			values[i] = v
		}
		if seen[v] {
			return Param{}, fmt.Errorf("-param %q: value %q given twice", s, v)
		}
		seen[v] = true
	}
	return Param{Name: name, Values: values}, nil
}

// splitTop splits s at commas outside parentheses and trims each part.
func splitTop(s string) []string {
	var out []string
	depth, start := 0, 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '(':
			depth++
		case ')':
			depth--
		case ',':
			if depth == 0 {
				out = append(out, strings.TrimSpace(s[start:i]))
				start = i + 1
			}
		}
	}
	return append(out, strings.TrimSpace(s[start:]))
}

// Point is one combination of parameter values.
type Point map[string]string

// Overrides returns the point's overrides in parameter-name order.
func (p Point) Overrides() []Override {
	names := slices.Sorted(maps.Keys(p))
	out := make([]Override, 0, len(names))
	for _, n := range names {
		os, err := ParamOverrides(n, p[n])
		if err != nil {
			panic("scenarios: a parsed parameter no longer parses: " + err.Error())
		}
		out = append(out, os...)
	}
	return out
}

// Grid returns the cartesian product of the parameters' values, the first
// parameter varying slowest; no parameters give one empty point.
func Grid(params []Param) []Point {
	points := []Point{{}}
	for _, p := range params {
		var next []Point
		for _, base := range points {
			for _, v := range p.Values {
				q := Point{}
				for k, x := range base {
					q[k] = x
				}
				q[p.Name] = v
				next = append(next, q)
			}
		}
		points = next
	}
	return points
}
