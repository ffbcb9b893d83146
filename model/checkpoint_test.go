package model

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

// The JSON names are upstream's @JSONField names; these texts are what a
// RocketMQ 5 broker writes into the revive topic (fastjson, sorted keys).
func TestPopCheckPointJSON(t *testing.T) {
	ck := PopCheckPoint{StartOffset: 7, PopTime: 1704067200000, InvisibleTime: 60000, BitMap: 5, Num: 3, QueueID: 2,
		Topic: "%RETRY%g_t", CID: "g", ReviveOffset: 11, QueueOffsetDiff: []int32{0, 2, 5}, BrokerName: "broker-a",
		RePutTimes: "1", HasRePutTimes: true}
	const want = `{"bm":5,"bn":"broker-a","c":"g","d":[0,2,5],"it":60000,"n":3,"pt":1704067200000,"q":2,"ro":11,"rp":"1","so":7,"t":"%RETRY%g_t"}`
	if got := string(ck.AppendJSON(nil)); got != want {
		t.Fatalf("AppendJSON:\n got %s\nwant %s", got, want)
	}
	back, err := ParsePopCheckPoint([]byte(want))
	if err != nil || !reflect.DeepEqual(back, ck) {
		t.Fatalf("ParsePopCheckPoint = %+v, %v; want %+v", back, err, ck)
	}
	// fastjson also writes getter-only properties; a reader skips them.
	// An old-format checkpoint has no d; rp null means 0 re-puts.
	old, err := ParsePopCheckPoint([]byte(`{"bm":0,"c":"g","it":1000,"n":2,"pt":5,"q":0,"reviveTime":1005,"ro":0,"so":4,"t":"t","x":{"y":[1,"z",null,true]}}`))
	if err != nil {
		t.Fatal(err)
	}
	if old.QueueOffsetDiff != nil || old.HasRePutTimes || old.ParseRePutTimes() != 0 || old.BrokerName != "" {
		t.Fatalf("old-format checkpoint decoded as %+v", old)
	}
	if old.IndexOfAck(5) != 1 || old.IndexOfAck(6) != -1 || old.IndexOfAck(3) != -1 || old.AckOffsetByIndex(1) != 5 {
		t.Fatalf("old-format index arithmetic wrong: %+v", old)
	}
	if got := string(old.AppendJSON(nil)); got != `{"bm":0,"c":"g","it":1000,"n":2,"pt":5,"q":0,"ro":0,"so":4,"t":"t"}` {
		t.Fatalf("null broker name and re-put times must be omitted, got %s", got)
	}
}

func TestPopCheckPointArithmetic(t *testing.T) {
	ck := PopCheckPoint{StartOffset: 100, Num: 3, QueueOffsetDiff: []int32{0, 3, 9}, Topic: "t", CID: "g", QueueID: 1, PopTime: 42, BrokerName: "b"}
	for _, c := range []struct {
		off  int64
		want int
	}{{100, 0}, {103, 1}, {109, 2}, {101, -1}, {99, -1}, {100 + 1<<32 + 3, 1}} { // the last: #11180's 32-bit narrowing
		if got := ck.IndexOfAck(c.off); got != c.want {
			t.Errorf("IndexOfAck(%d) = %d, want %d", c.off, got, c.want)
		}
	}
	if ck.AckOffsetByIndex(2) != 109 || ck.ReviveTime() != 42 {
		t.Errorf("AckOffsetByIndex/ReviveTime wrong")
	}
	if k := ck.MergeKey(); k != "tg110042b" {
		t.Errorf("MergeKey = %q", k)
	}
	if k := ck.AppendMergeKey([]byte("pre:")); string(k) != "pre:tg110042b" {
		t.Errorf("AppendMergeKey = %q", k)
	}
	if k := MergeKey("t", "g", 1, 100, 42, ""); k != "tg110042null" {
		t.Errorf("MergeKey with a null broker name = %q", k)
	}
	if u := ck.UniqueID(); u != "t@1@100@g@42@b@ck" {
		t.Errorf("UniqueID = %q", u)
	}
	for rp, want := range map[string]int{"0": 0, "16": 16, "": 127, "x": 127} {
		c := PopCheckPoint{RePutTimes: rp, HasRePutTimes: true}
		if got := c.ParseRePutTimes(); got != want {
			t.Errorf("ParseRePutTimes(%q) = %d, want %d", rp, got, want)
		}
	}
}

func TestAckMsgJSON(t *testing.T) {
	a := AckMsg{AckOffset: 100, StartOffset: 200, ConsumerGroup: "group", Topic: "topic", QueueID: 3, PopTime: 1670212915531, BrokerName: "brokerName"}
	const short = `{"ao":100,"bn":"brokerName","c":"group","pt":1670212915531,"q":3,"so":200,"t":"topic"}`
	if got := string(a.AppendJSON(nil)); got != short {
		t.Fatalf("AppendJSON:\n got %s\nwant %s", got, short)
	}
	// The long names are accepted as alternates (@JSONField alternateNames).
	const long = `{"ackOffset":100,"brokerName":"brokerName","consumerGroup":"group","popTime":1670212915531,"queueId":3,"startOffset":200,"topic":"topic"}`
	for _, s := range []string{short, long} {
		got, err := ParseAckMsg([]byte(s))
		if err != nil || got != a {
			t.Fatalf("ParseAckMsg(%s) = %+v, %v", s, got, err)
		}
	}
	if u := a.UniqueID(); u != "topic@3@100@group@1670212915531@brokerName@ack" {
		t.Errorf("UniqueID = %q", u)
	}
	b := BatchAckMsg{AckMsg: AckMsg{AckOffset: -1, StartOffset: 5, ConsumerGroup: "g", Topic: "t", QueueID: 0, PopTime: 9}, AckOffsetList: []int64{5, 7}}
	const bs = `{"ao":-1,"aol":[5,7],"c":"g","pt":9,"q":0,"so":5,"t":"t"}`
	if got := string(b.AppendJSON(nil)); got != bs {
		t.Fatalf("batch AppendJSON:\n got %s\nwant %s", got, bs)
	}
	back, err := ParseBatchAckMsg([]byte(bs))
	if err != nil || !reflect.DeepEqual(back, b) {
		t.Fatalf("ParseBatchAckMsg = %+v, %v", back, err)
	}
	if u := b.UniqueID(); u != "t@0@[5, 7]@g@9@bAck" {
		t.Errorf("batch UniqueID = %q", u)
	}
}

func TestReviveJSONErrors(t *testing.T) {
	for _, s := range []string{``, `{`, `{"so":1.5}`, `{"so":"1"}`, `{"n":300}`, `{"so":1}x`, `{"t":"a\q"}`, `{"d":[1,]}`, `[]`, `{"so":01}`} {
		if _, err := ParsePopCheckPoint([]byte(s)); !errors.Is(err, ErrMalformedJSON) {
			t.Errorf("ParsePopCheckPoint(%q) = %v, want ErrMalformedJSON", s, err)
		}
	}
}

func FuzzParsePopCheckPoint(f *testing.F) {
	for _, s := range []string{
		`{"bm":5,"bn":"broker-a","c":"g","d":[0,2,5],"it":60000,"n":3,"pt":1704067200000,"q":2,"ro":11,"rp":"1","so":7,"t":"%RETRY%g_t"}`,
		`{"c":"g","t":"t","reviveTime":1,"d":null,"rp":null}`, `{}`, `{"t":"\u00e9\n"}`, `{"d":[]}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		c, err := ParsePopCheckPoint(b)
		if err != nil {
			if !errors.Is(err, ErrMalformedJSON) {
				t.Fatalf("error %v does not wrap ErrMalformedJSON", err)
			}
			return
		}
		back, err := ParsePopCheckPoint(c.AppendJSON(nil))
		if err != nil || !reflect.DeepEqual(back, c) {
			t.Fatalf("round trip of %q: %+v then %+v, %v", b, c, back, err)
		}
	})
}

func FuzzParseBatchAckMsg(f *testing.F) {
	for _, s := range []string{`{"ao":-1,"aol":[5,7],"c":"g","pt":9,"q":0,"so":5,"t":"t"}`, `{"ackOffsetList":[1],"brokerName":"b"}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		a, err := ParseBatchAckMsg(b)
		if err != nil {
			return
		}
		back, err := ParseBatchAckMsg(a.AppendJSON(nil))
		if err != nil || !reflect.DeepEqual(back, a) {
			t.Fatalf("round trip of %q: %+v then %+v, %v", b, a, back, err)
		}
	})
}

// Merge keys and unique ids longer than the stack buffer are built whole,
// and a short one costs a single allocation (the string).
func TestKeysLongAndShort(t *testing.T) {
	long := strings.Repeat("x", 300)
	ck := PopCheckPoint{Topic: long, CID: "g", QueueID: 2, StartOffset: 7, PopTime: 9, BrokerName: "b"}
	if got, want := ck.MergeKey(), long+"g279b"; got != want {
		t.Errorf("long MergeKey = %q", got)
	}
	if got, want := ck.UniqueID(), long+"@2@7@g@9@b@ck"; got != want {
		t.Errorf("long UniqueID = %q", got)
	}
	a := BatchAckMsg{AckMsg: AckMsg{Topic: "t", ConsumerGroup: long, PopTime: 1}, AckOffsetList: []int64{1, 2}}
	if got, want := a.UniqueID(), "t@0@[1, 2]@"+long+"@1@bAck"; got != want {
		t.Errorf("long batch UniqueID = %q", got)
	}
	short := PopCheckPoint{Topic: "orders", CID: "billing", QueueID: 3, StartOffset: 12345, PopTime: 1700000000000, BrokerName: "broker-a"}
	ack := AckMsg{Topic: "orders", ConsumerGroup: "billing", QueueID: 3, AckOffset: 12346, StartOffset: 12345, PopTime: 1700000000000}
	for _, c := range []struct {
		name string
		f    func()
	}{{"MergeKey", func() { _ = short.MergeKey() }}, {"UniqueID", func() { _ = short.UniqueID() }}, {"ack UniqueID", func() { _ = ack.UniqueID() }}} {
		if n := testing.AllocsPerRun(100, c.f); n != 1 {
			t.Errorf("%s: %v allocations, want 1", c.name, n)
		}
	}
}
