package meminfo

import (
	"runtime"
	"testing"
)

func TestParse(t *testing.T) {
	got, err := Parse("MemTotal:       8039256 kB\nMemFree:  10 kB\nMemAvailable:   6000000 kB\n")
	if want := (Info{Total: 8039256 << 10, Available: 6000000 << 10}); err != nil || got != want {
		t.Fatalf("Parse = %+v, %v; want %+v", got, err, want)
	}
	if got.Free() != got.Available {
		t.Errorf("Free() = %d, want Available %d", got.Free(), got.Available)
	}
	old, err := Parse("MemTotal: 4 kB\n") // a kernel without MemAvailable
	if err != nil || old.Free() != 4<<10 {
		t.Errorf("Parse without MemAvailable = %+v, %v; want Free() = Total = 4096", old, err)
	}
	for _, in := range []string{"", "MemFree: 10 kB", "MemTotal: 12 MB", "MemTotal: x kB", "MemTotal: -4 kB",
		"MemTotal: 0 kB", "MemTotal: 8 kB\nMemAvailable: ? kB"} {
		if got, err := Parse(in); err == nil {
			t.Errorf("Parse(%q) = %+v, want an error", in, got)
		}
	}
}

func TestReadThisMachine(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("no /proc/meminfo off Linux")
	}
	i, err := Read()
	if err != nil {
		t.Fatal(err)
	}
	if i.Total < 1<<20 || i.Free() > i.Total {
		t.Errorf("Read() = %+v: want a Total of at least 1 MiB and Free() within it", i)
	}
}
