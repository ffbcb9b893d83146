package meminfo

import (
	"fmt"
	"os"
	"strconv"
	"strings"
)

// Path is where Linux reports the machine's memory.
const Path = "/proc/meminfo"

// Info is the machine's memory, in bytes.
type Info struct {
	Total     uint64 // MemTotal
	Available uint64 // MemAvailable; 0 where the kernel does not report it (before 3.14)
}

// Free is what a new process may take: Available where the kernel reports
// it, else Total.
func (i Info) Free() uint64 {
	if i.Available > 0 {
		return i.Available
	}
	return i.Total
}

// Read reads and parses Path.
func Read() (Info, error) {
	raw, err := os.ReadFile(Path)
	if err != nil {
		return Info{}, err
	}
	i, err := Parse(string(raw))
	if err != nil {
		return Info{}, fmt.Errorf("%s: %v", Path, err)
	}
	return i, nil
}

// Parse reads MemTotal (required) and MemAvailable (optional) from the
// text of /proc/meminfo; either, when present, must be a positive number
// of kB.
func Parse(text string) (Info, error) {
	var i Info
	for _, line := range strings.Split(text, "\n") {
		key, rest, _ := strings.Cut(line, ":")
		var dst *uint64
		switch key {
		case "MemTotal":
			dst = &i.Total
		case "MemAvailable":
			dst = &i.Available
		default:
			continue
		}
		f := strings.Fields(rest)
		if len(f) != 2 || f[1] != "kB" {
			return Info{}, fmt.Errorf("%s line %q: want a number of kB", key, line)
		}
		kb, err := strconv.ParseUint(f[0], 10, 54) // kB << 10 fits in 64 bits
		if err != nil || kb == 0 {
			return Info{}, fmt.Errorf("%s line %q: want a positive number of kB", key, line)
		}
		*dst = kb << 10
	}
	if i.Total == 0 {
		return Info{}, fmt.Errorf("no MemTotal line")
	}
	return i, nil
}
