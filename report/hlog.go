package report

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
)

// The .hlog file is the HdrHistogram interval log, format version 1.3, the
// one HistogramLogWriter / HistogramLogReader (Java and Go) and
// HistogramLogAnalyzer read. popsim uses it as the lossless store of a run's
// histograms: one tagged line per histogram, names sorted,
//
//	Tag=<name>,<start s>,<length s>,<max ms>,<base64 compressed V2 histogram>
//
// after three comment/legend lines. Start and length come from the
// histogram's StartTimeMs/EndTimeMs (zero unless the producer set them, so
// the file stays deterministic); max is informational. Only the payload is
// read back. Decoding the payload restores every count, so a histogram read
// from an hlog Equals the one written and merges exactly.
//
// The writer is hand-rolled on top of hdrhistogram.Encode because the
// library's writer prints max in units of 1e6 (ns→ms) with no public way to
// change it; the reader is hand-rolled because the library's reader silently
// drops a last line without a newline and cannot report duplicate tags.
const hlogPreamble = "#[Histogram log format version 1.3]\n" +
	"#popsim latency histograms in microseconds; one line per histogram, Tag=<name>\n" +
	"\"StartTimestamp\",\"Interval_Length\",\"Interval_Max\",\"Interval_Compressed_Histogram\"\n"

// EncodeHlog renders hists as an HdrHistogram log (see the format above).
func EncodeHlog(hists map[string]*hdrhistogram.Histogram) ([]byte, error) {
	var b bytes.Buffer
	b.WriteString(hlogPreamble)
	for _, name := range sortedHistNames(hists) {
		if err := ValidHistName(name); err != nil {
			return nil, err
		}
		h := hists[name]
		if h == nil {
			return nil, fmt.Errorf("report: histogram %q is nil", name)
		}
		payload, err := h.Encode(hdrhistogram.V2CompressedEncodingCookieBase)
		if err != nil {
			return nil, fmt.Errorf("report: encode histogram %q: %w", name, err)
		}
		start := float64(h.StartTimeMs()) / 1000
		length := float64(h.EndTimeMs()-h.StartTimeMs()) / 1000
		fmt.Fprintf(&b, "Tag=%s,%.3f,%.3f,%.3f,%s\n", name, start, length, float64(h.Max())/HgrmValueScale, payload)
	}
	return b.Bytes(), nil
}

// DecodeHlog reads an HdrHistogram log and returns its histograms by tag.
// Lines starting with '#' and the legend line are skipped. Every other line
// must be a tagged interval histogram with a valid, unique name; anything
// else is an error naming the line.
func DecodeHlog(r io.Reader) (map[string]*hdrhistogram.Histogram, error) {
	hists := make(map[string]*hdrhistogram.Histogram)
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64*1024), 64<<20)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimRight(sc.Text(), "\r")
		if line == "" || line[0] == '#' || strings.HasPrefix(line, `"StartTimestamp"`) {
			continue
		}
		name, h, err := decodeHlogLine(line)
		if err != nil {
			return nil, fmt.Errorf("report: hlog line %d: %w", n, err)
		}
		if _, dup := hists[name]; dup {
			return nil, fmt.Errorf("report: hlog line %d: histogram %q appears twice", n, name)
		}
		hists[name] = h
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("report: read hlog: %w", err)
	}
	return hists, nil
}

func decodeHlogLine(line string) (string, *hdrhistogram.Histogram, error) {
	if !strings.HasPrefix(line, "Tag=") {
		return "", nil, fmt.Errorf("want Tag=<name>,<start>,<length>,<max>,<histogram>, got %.40q", line)
	}
	fields := strings.Split(line[len("Tag="):], ",")
	if len(fields) != 5 {
		return "", nil, fmt.Errorf("want 5 comma-separated fields after Tag=, got %d", len(fields))
	}
	name := fields[0]
	if err := ValidHistName(name); err != nil {
		return "", nil, err
	}
	var times [3]float64
	for i := range times {
		v, err := strconv.ParseFloat(fields[1+i], 64)
		if err != nil {
			return "", nil, fmt.Errorf("histogram %q: field %d: %w", name, i+2, err)
		}
		times[i] = v
	}
	h, err := decodeHistogram(fields[4])
	if err != nil {
		return "", nil, fmt.Errorf("histogram %q: decode: %w", name, err)
	}
	startMs := int64(times[0]*1000 + 0.5)
	h.SetStartTimeMs(startMs)
	h.SetEndTimeMs(startMs + int64(times[1]*1000+0.5))
	return name, h, nil
}

// sortedHistNames is the order histograms are written and shown in.
func sortedHistNames(hists map[string]*hdrhistogram.Histogram) []string {
	return slices.Sorted(maps.Keys(hists))
}

// decodeHistogram wraps hdrhistogram.Decode, which indexes into its input
// without length checks: a corrupt payload is the world's error, not a bug
// here, so its panic becomes an error.
func decodeHistogram(payload string) (h *hdrhistogram.Histogram, err error) {
	defer func() {
		if r := recover(); r != nil {
			h, err = nil, fmt.Errorf("corrupt histogram payload: %v", r)
		}
	}()
	h, err = hdrhistogram.Decode([]byte(payload))
	if err == nil && h == nil {
		err = fmt.Errorf("corrupt histogram payload")
	}
	return h, err
}
