package model

// Native fuzz targets for the wire codecs: receipt handles, record keys and
// values, and the pop response's offset-info headers. Each decoder must
// never panic, and whatever it accepts must survive encode -> decode
// unchanged. Seeds are here (f.Add) and under testdata/fuzz/<Target>/.
//
//	go test ./model -run '^$' -fuzz '^FuzzParseReceiptHandle$' -fuzztime 20s

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"testing"
)

func FuzzParseReceiptHandle(f *testing.F) {
	for _, s := range []string{
		"64 1666860736757 60000 4 0 broker-a 0 110",
		"64 1666860736757 60000 4 0 broker-a 0 110 123456",
		"0 1704067200000 0 999 2 b 65535 9223372036854775807",
		"-3 0 0 0 1 x 0 0 -1",
		"+1 01 1 1 0 b 0 1", "1 2 3", "", " ", "1 1 1 1 0  0 1", "1 1 1 1 0 b 0 1 2 3",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		h, err := ParseReceiptHandle(s)
		if err != nil {
			if !errors.Is(err, ErrMalformedHandle) {
				t.Fatalf("ParseReceiptHandle(%q) error %v does not wrap ErrMalformedHandle", s, err)
			}
			return
		}
		back, err := ParseReceiptHandle(h.String())
		if err != nil {
			t.Fatalf("ParseReceiptHandle(%q) = %+v, whose String %q does not parse: %v", s, h, h.String(), err)
		}
		if back != h {
			t.Fatalf("round trip of %q: parsed %+v, String %q, parsed again %+v", s, h, h.String(), back)
		}
	})
}

func FuzzParseRecordKey(f *testing.F) {
	for _, r := range []PopConsumerRecord{
		{PopTime: 1000, InvisibleTime: 234, GroupID: "GroupId", TopicID: "TopicId", QueueID: 3, Offset: 258},
		{PopTime: 1704067200000, InvisibleTime: 60000, GroupID: "a-b", TopicID: "%RETRY%a-b_t", QueueID: 0, Offset: 0},
		{PopTime: -1, GroupID: "g", TopicID: "t", QueueID: -1, Offset: -1},
	} {
		f.Add(r.Key())
	}
	f.Add([]byte("short"))
	f.Add(bytes.Repeat([]byte{'@'}, 40))
	f.Fuzz(func(t *testing.T, b []byte) {
		k, err := ParseRecordKey(b)
		if err != nil {
			return
		}
		r := PopConsumerRecord{PopTime: k.VisibilityTimeout, GroupID: k.GroupID, TopicID: k.TopicID, QueueID: k.QueueID, Offset: k.Offset}
		if got := r.Key(); !bytes.Equal(got, b) {
			t.Fatalf("ParseRecordKey(%x) = %+v, which encodes to %x", b, k, got)
		}
		if r.KeyLen() != len(b) {
			t.Fatalf("KeyLen %d for a %d-byte key", r.KeyLen(), len(b))
		}
	})
}

// fuzzOffsetInfo is the round trip shared by the two offset-info headers.
func fuzzOffsetInfo(t *testing.T, s string, parse func(string) ([]OffsetInfo, error)) {
	es, err := parse(s)
	if err != nil {
		if !errors.Is(err, ErrMalformedOffsetInfo) {
			t.Fatalf("parse(%q) error %v does not wrap ErrMalformedOffsetInfo", s, err)
		}
		return
	}
	var b []byte
	for _, e := range es {
		b = AppendOffsetInfo(b, e)
	}
	back, err := parse(string(b))
	if err != nil || !reflect.DeepEqual(back, es) {
		t.Fatalf("round trip of %q: parsed %+v, built %q, parsed again %+v, %v", s, es, b, back, err)
	}
}

func FuzzParseMsgOffsetInfo(f *testing.F) {
	for _, s := range []string{"0 3 10,12,13", "0 3 10,12,13;1 0 4", "2 65535 0", "", "0 3", "0 3 1;0 3 2", "0 1 a", "0 -1 1", "+1 01 1,,2", ";"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) { fuzzOffsetInfo(t, s, ParseMsgOffsetInfo) })
}

func FuzzParseStartOffsetInfo(f *testing.F) {
	for _, s := range []string{"0 3 1", "0 3 1;1 0 7;2 0 9", "0 3 1,2", "", "x 1 1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		fuzzOffsetInfo(t, s, ParseStartOffsetInfo)
		if es, err := ParseStartOffsetInfo(s); err == nil {
			for _, e := range es {
				if len(e.Offsets) != 1 {
					t.Fatalf("ParseStartOffsetInfo(%q) accepted entry %+v with %d offsets", s, e, len(e.Offsets))
				}
			}
		}
	})
}

func FuzzParseOrderCountInfo(f *testing.F) {
	for _, s := range []string{"0 qo2%17 3;0 2 0", "1 qo0%0 0", "2 7 2147483647", "0 qo2 3", "0 qo2%x 1", "0 2", "0 2 1;0 2 2", "0 qo%5 1", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		es, err := ParseOrderCountInfo(s)
		if err != nil {
			if !errors.Is(err, ErrMalformedOffsetInfo) {
				t.Fatalf("ParseOrderCountInfo(%q) error %v does not wrap ErrMalformedOffsetInfo", s, err)
			}
			return
		}
		var b []byte
		for _, e := range es {
			b = AppendOrderCount(b, e)
		}
		back, err := ParseOrderCountInfo(string(b))
		if err != nil || !reflect.DeepEqual(back, es) {
			t.Fatalf("round trip of %q: parsed %+v, built %q, parsed again %+v, %v", s, es, b, back, err)
		}
	})
}

func FuzzDecodePopConsumerRecord(f *testing.F) {
	f.Add([]byte(`{"popTime":1,"groupId":"g","topicId":"t","queueId":2,"retryFlag":1,"invisibleTime":60000,"offset":7,"attemptTimes":3}`))
	f.Add([]byte(`{"popTime":1,"groupId":"g","topicId":"t","queueId":2,"retryFlag":0,"invisibleTime":0,"offset":0,"attemptTimes":0,"attemptId":"x"}`))
	f.Add([]byte(`{"nope":1}`))
	f.Add([]byte(`{"popTime":1} {"popTime":2}`))
	f.Add([]byte(`null`))
	f.Add([]byte(`{"groupId":"\u00e9<>&"}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := DecodePopConsumerRecord(b)
		if err != nil {
			return
		}
		if !json.Valid(b) || bytes.TrimSpace(b)[0] != '{' {
			t.Fatalf("DecodePopConsumerRecord accepted %q, which is not one JSON object", b)
		}
		back, err := DecodePopConsumerRecord(r.Encode())
		if err != nil || *back != *r {
			t.Fatalf("round trip of %q: decoded %+v, encoded %s, decoded again %+v, %v", b, *r, r.Encode(), back, err)
		}
	})
}

func FuzzParseOrderInfo(f *testing.F) {
	f.Add([]byte(`{"a":"x","cm":5,"i":60000,"l":9,"o":[3,1,2],"oc":{"3":1,"5":2},"ot":{"4":70000},"popTime":1000}`))
	f.Add([]byte(`{"cm":0,"l":0,"o":[7],"oc":{7:1},"popTime":1}`))
	f.Add([]byte(`{"i":null,"o":null,"ot":null,"popTime":-1,"x":[{"y":1}]}`))
	f.Add([]byte(`{"oc":{"1":2,"1":3}}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		o, err := ParseOrderInfo(b)
		if err != nil {
			if !errors.Is(err, ErrMalformedJSON) {
				t.Fatalf("ParseOrderInfo(%q) error %v does not wrap ErrMalformedJSON", b, err)
			}
			return
		}
		enc := o.AppendJSON(nil)
		back, err := ParseOrderInfo(enc)
		if err != nil || !reflect.DeepEqual(back, o) {
			t.Fatalf("round trip of %q: parsed %+v, encoded %s, parsed again %+v, %v", b, o, enc, back, err)
		}
	})
}
