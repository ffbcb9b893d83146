package report

import (
	"bytes"
	"math/rand/v2"
	"strings"
	"testing"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
)

// randomHists returns an end-to-end and a service-time histogram of n
// exponential values.
func randomHists(seed uint64, n int) map[string]*hdrhistogram.Histogram {
	rng := rand.New(rand.NewPCG(seed, 99))
	e2e, svc := NewLatencyHistogram(), NewLatencyHistogram()
	for i := 0; i < n; i++ {
		s := int64(rng.ExpFloat64()*8000) + 1
		svc.RecordValue(s)
		e2e.RecordValue(s + int64(rng.ExpFloat64()*30000))
	}
	return map[string]*hdrhistogram.Histogram{HistEndToEnd: e2e, HistServiceTime: svc}
}

func TestHlogRoundTrip(t *testing.T) {
	hists := randomHists(1, 20000)
	hists["empty"] = NewLatencyHistogram()
	data, err := EncodeHlog(hists)
	if err != nil {
		t.Fatal(err)
	}
	again, _ := EncodeHlog(hists)
	if !bytes.Equal(data, again) {
		t.Error("EncodeHlog is not deterministic")
	}
	got, err := DecodeHlog(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(hists) {
		t.Fatalf("decoded %d histograms, want %d", len(got), len(hists))
	}
	for name, h := range hists {
		if got[name] == nil || !got[name].Equals(h) {
			t.Errorf("histogram %q does not round-trip", name)
		}
	}
	// Tags are sorted, one line each.
	var tags []string
	for _, line := range strings.Split(string(data), "\n") {
		if strings.HasPrefix(line, "Tag=") {
			tags = append(tags, line[4:strings.Index(line, ",")])
		}
	}
	if strings.Join(tags, " ") != "empty end_to_end service_time" {
		t.Errorf("tags in file order: %q", tags)
	}
}

func TestHlogReadableByLibraryReader(t *testing.T) {
	hists := randomHists(2, 5000)
	data, err := EncodeHlog(hists)
	if err != nil {
		t.Fatal(err)
	}
	r := hdrhistogram.NewHistogramLogReader(bytes.NewReader(data))
	n := 0
	for {
		h, err := r.NextIntervalHistogram()
		if err != nil {
			t.Fatal(err)
		}
		if h == nil {
			break
		}
		n++
		if want := hists[h.Tag()]; want == nil || !want.Equals(h) {
			t.Errorf("library reader: histogram %q differs", h.Tag())
		}
	}
	if n != len(hists) {
		t.Errorf("library reader found %d histograms, want %d", n, len(hists))
	}
}

func TestHlogShardsMergeExactly(t *testing.T) {
	// Two shards written to disk, read back and merged equal the histogram
	// of all their values.
	rng := rand.New(rand.NewPCG(3, 4))
	all := NewLatencyHistogram()
	shards := []*hdrhistogram.Histogram{NewLatencyHistogram(), NewLatencyHistogram()}
	for i := 0; i < 30000; i++ {
		v := int64(rng.ExpFloat64()*50000) + 1
		all.RecordValue(v)
		shards[rng.IntN(2)].RecordValue(v)
	}
	merged := NewLatencyHistogram()
	for _, sh := range shards {
		data, err := EncodeHlog(map[string]*hdrhistogram.Histogram{HistEndToEnd: sh})
		if err != nil {
			t.Fatal(err)
		}
		back, err := DecodeHlog(bytes.NewReader(data))
		if err != nil {
			t.Fatal(err)
		}
		if err := Merge(merged, back[HistEndToEnd]); err != nil {
			t.Fatal(err)
		}
	}
	if !merged.Equals(all) {
		t.Fatal("hlog write → read → merge of two shards differs from the histogram of all values")
	}
	if LatencyOf(merged) != LatencyOf(all) {
		t.Errorf("LatencyOf: merged %+v, all %+v", LatencyOf(merged), LatencyOf(all))
	}
}

func TestHlogErrors(t *testing.T) {
	good, _ := EncodeHlog(randomHists(5, 100))
	line := strings.Split(string(good), "\n")[3] // first histogram line
	payload := line[strings.LastIndex(line, ",")+1:]
	cases := map[string]string{
		"duplicate tag":   line + "\n" + line + "\n",
		"untagged line":   "0.000,0.000,1.0," + payload + "\n",
		"too few fields":  "Tag=x,0.000," + payload + "\n",
		"bad number":      "Tag=x,zero,0.000,1.0," + payload + "\n",
		"bad name":        "Tag=a b,0.000,0.000,1.0," + payload + "\n",
		"not base64":      "Tag=x,0.000,0.000,1.0,!!!\n",
		"short payload":   "Tag=x,0.000,0.000,1.0,AAAA\n",
		"corrupt payload": "Tag=x,0.000,0.000,1.0," + payload[:len(payload)/2] + "AAAA\n",
	}
	for name, text := range cases {
		if _, err := DecodeHlog(strings.NewReader(text)); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
	// A last line without a newline still counts.
	got, err := DecodeHlog(strings.NewReader(strings.TrimSuffix(string(good), "\n")))
	if err != nil || len(got) != 2 {
		t.Errorf("no trailing newline: %d histograms, err %v; want 2", len(got), err)
	}
	if _, err := EncodeHlog(map[string]*hdrhistogram.Histogram{"a,b": NewLatencyHistogram()}); err == nil {
		t.Error("EncodeHlog accepted a name with a comma")
	}
	if _, err := EncodeHlog(map[string]*hdrhistogram.Histogram{"x": nil}); err == nil {
		t.Error("EncodeHlog accepted a nil histogram")
	}
}
