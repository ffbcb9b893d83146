package model

import (
	"bytes"
	"errors"
	"strconv"
	"strings"
	"testing"
	"unicode"
)

func TestRecordKeyLayout(t *testing.T) {
	r := &PopConsumerRecord{PopTime: 1000, InvisibleTime: 234, GroupID: "GroupId", TopicID: "TopicId", QueueID: 3, Offset: 258}
	k := r.Key()
	if len(k) != 37 || r.KeyLen() != 37 {
		t.Fatalf("key length %d (KeyLen %d), want 37", len(k), r.KeyLen())
	}
	want := []byte{0, 0, 0, 0, 0, 0, 0x04, 0xd2}
	want = append(want, "GroupId@TopicId@"...)
	want = append(want, 0, 0, 0, 3, '@', 0, 0, 0, 0, 0, 0, 1, 2)
	if !bytes.Equal(k, want) {
		t.Fatalf("key\n got %x\nwant %x", k, want)
	}
	got, err := ParseRecordKey(k)
	if err != nil {
		t.Fatal(err)
	}
	if got != (RecordKey{1234, "GroupId", "TopicId", 3, 258}) {
		t.Fatalf("ParseRecordKey = %+v", got)
	}
}

func TestRecordKeyOrderIsBytewise(t *testing.T) {
	// '-' (0x2d) sorts before '@' (0x40): group "a-b" precedes group "a"
	// in the store even though "a" < "a-b" as a string.
	a := &PopConsumerRecord{PopTime: 5, GroupID: "a", TopicID: "t", Offset: 1}
	b := &PopConsumerRecord{PopTime: 5, GroupID: "a-b", TopicID: "t", Offset: 0}
	if CompareRecordKeys(b, a) >= 0 {
		t.Fatal("a-b@t should sort before a@t")
	}
	c := &PopConsumerRecord{PopTime: 4, InvisibleTime: 0, GroupID: "z", TopicID: "z", Offset: 9}
	if CompareRecordKeys(c, a) >= 0 {
		t.Fatal("smaller visibilityTimeout must sort first")
	}
	d := &PopConsumerRecord{PopTime: 5, GroupID: "a", TopicID: "t", QueueID: 1, Offset: 0}
	if CompareRecordKeys(a, d) >= 0 {
		t.Fatal("queueId orders before offset")
	}
}

func TestParseRecordKeyRejectsGarbage(t *testing.T) {
	for _, k := range [][]byte{nil, []byte("short"), bytes.Repeat([]byte{'x'}, 40)} {
		if _, err := ParseRecordKey(k); err == nil {
			t.Errorf("ParseRecordKey(%q) accepted", k)
		}
	}
}

func TestRecordJSONRoundTrip(t *testing.T) {
	r := &PopConsumerRecord{PopTime: 1, GroupID: "g", TopicID: "t", QueueID: 2, RetryFlag: RetryTopicV1Type, InvisibleTime: 60000, Offset: 7, AttemptTimes: 3}
	enc := string(r.Encode())
	if enc != `{"popTime":1,"groupId":"g","topicId":"t","queueId":2,"retryFlag":1,"invisibleTime":60000,"offset":7,"attemptTimes":3}` {
		t.Fatalf("Encode = %s", enc)
	}
	back, err := DecodePopConsumerRecord([]byte(enc))
	if err != nil || *back != *r {
		t.Fatalf("round trip = %+v, %v", back, err)
	}
	if _, err := DecodePopConsumerRecord([]byte(`{"nope":1}`)); err == nil {
		t.Fatal("unknown field accepted")
	}
}

func TestReceiptHandleExample(t *testing.T) {
	const s = "64 1666860736757 60000 4 0 broker-a 0 110"
	h, err := ParseReceiptHandle(s)
	if err != nil {
		t.Fatal(err)
	}
	want := ReceiptHandle{64, 1666860736757, 60000, 4, NormalTopic, "broker-a", 0, 110, -1}
	if h != want {
		t.Fatalf("got %+v", h)
	}
	if h.String() != s {
		t.Fatalf("String = %q", h.String())
	}
	if h.NextVisibleTime() != 1666860796757 || !h.IsExpired(1666860796757) || h.IsExpired(1666860796756) {
		t.Fatal("expiry is nextVisibleTime <= now")
	}
	h9, err := ParseReceiptHandle(s + " 123456")
	if err != nil || h9.CommitLogOffset != 123456 || h9.String() != s+" 123456" {
		t.Fatalf("9-field handle: %+v %v", h9, err)
	}
}

func TestReceiptHandleMalformed(t *testing.T) {
	cases := map[string]string{
		"":                                   "has 1 fields",
		"   ":                                "has 0 fields",
		"1 2 3":                              "has 3 fields",
		" 1 1 1 1 0 b 0 1":                   "ckQueueOffset",
		"a 1 1 1 0 b 0 1":                    "ckQueueOffset",
		"1  1 1 0 b 0 1 2":                   "popTime",
		"1 1 1 2147483648 0 b 0 1":           "reviveQid",
		"1 1 1 1 0 b 0 99999999999999999999": "msgQueueOffset",
		"1 1 1 1 0 b 0 1 x":                  "commitLogOffset",
		"1 1 1 1 0 b - 1":                    "queueId",
		"1 + 1 1 0 b 0 1":                    "popTime",
		"1 1 1 1 0 b 0 \U0001D7CF":           "msgQueueOffset", // a digit outside the BMP: two surrogates in Java
	}
	for in, want := range cases {
		_, err := ParseReceiptHandle(in)
		if err == nil || !errors.Is(err, ErrMalformedHandle) || !strings.Contains(err.Error(), want) {
			t.Errorf("ParseReceiptHandle(%q) = %v, want error mentioning %q", in, err, want)
		}
	}
}

// TestReceiptHandleAcceptsWhatDecodeAccepts: RocketMQ's ReceiptHandle.decode
// takes any long or int Java parses, any text as the retry flag and the
// broker name, trailing spaces, and more than nine fields.
func TestReceiptHandleAcceptsWhatDecodeAccepts(t *testing.T) {
	cases := []struct {
		in   string
		want ReceiptHandle
	}{
		{"-3 -1 -60000 -1 0 b -7 -1", ReceiptHandle{-3, -1, -60000, -1, NormalTopic, "b", -7, -1, -1}},
		{"+1 007 1 1 1 b 0 1 -5", ReceiptHandle{1, 7, 1, 1, RetryTopicV1Type, "b", 0, 1, -5}},
		{"1 1 1 1 01 b 0 1", ReceiptHandle{1, 1, 1, 1, NormalTopic, "b", 0, 1, -1}}, // "01" is not "1"
		{"1 1 1 1 7 b 0 1", ReceiptHandle{1, 1, 1, 1, NormalTopic, "b", 0, 1, -1}},
		{"1 1 1 1 x b 0 1", ReceiptHandle{1, 1, 1, 1, NormalTopic, "b", 0, 1, -1}},
		{"1 1 1 1  b 0 1", ReceiptHandle{1, 1, 1, 1, NormalTopic, "b", 0, 1, -1}},
		{"1 1 1 1 2  0 1", ReceiptHandle{1, 1, 1, 1, RetryTopicV2Type, "", 0, 1, -1}},
		{"1 1 1 1 0 b 0 1 2 3 x", ReceiptHandle{1, 1, 1, 1, NormalTopic, "b", 0, 1, 2}},
		{"1 1 1 1 0 b 0 1   ", ReceiptHandle{1, 1, 1, 1, NormalTopic, "b", 0, 1, -1}},
		{"1 1 1 1 0 b 0 1 0", ReceiptHandle{1, 1, 1, 1, NormalTopic, "b", 0, 1, 0}},
		{"-9223372036854775808 9223372036854775807 1 -2147483648 0 b 2147483647 1", ReceiptHandle{-1 << 63, 1<<63 - 1, 1, -1 << 31, NormalTopic, "b", 1<<31 - 1, 1, -1}},
		{"\u0663 \uff11\uff12 1 1 0 b 0 1", ReceiptHandle{3, 12, 1, 1, NormalTopic, "b", 0, 1, -1}}, // Arabic-Indic 3, fullwidth 12
	}
	for _, c := range cases {
		in := c.in
		got, err := ParseReceiptHandle(in)
		if err != nil || got != c.want {
			t.Errorf("ParseReceiptHandle(%q) = %+v, %v; want %+v", in, got, err, c.want)
			continue
		}
		back, err := ParseReceiptHandle(got.String())
		if err != nil || back != got {
			t.Errorf("%q: String %q parses to %+v, %v", in, got.String(), back, err)
		}
	}
}

// TestReceiptHandleNineFieldsCommitLogOffsetZero: a proxy handle whose
// commit-log offset is 0 keeps its ninth field (0 is a real offset, -1
// means absent).
func TestReceiptHandleNineFieldsCommitLogOffsetZero(t *testing.T) {
	const s = "64 1666860736757 60000 4 0 broker-a 0 110 0"
	h, err := ParseReceiptHandle(s)
	if err != nil || h.CommitLogOffset != 0 {
		t.Fatalf("ParseReceiptHandle(%q) = %+v, %v: want CommitLogOffset 0", s, h, err)
	}
	if h.String() != s {
		t.Fatalf("String = %q, want %q (the ninth field kept)", h.String(), s)
	}
	var slow ReceiptHandle
	if slow, err = parseHandleCareful(s); err != nil || slow != h {
		t.Fatalf("the careful decoder gives %+v, %v", slow, err)
	}
}

func TestJavaSplitAndNumbers(t *testing.T) {
	for in, want := range map[string][]string{
		"": {""}, "a": {"a"}, "   ": {}, "a b": {"a", "b"}, "a  b ": {"a", "", "b"}, " a": {"", "a"},
	} {
		if got := JavaSplit(in, ' '); strings.Join(got, "|") != strings.Join(want, "|") || len(got) != len(want) {
			t.Errorf("JavaSplit(%q) = %q, want %q", in, got, want)
		}
	}
	for in, want := range map[string]int64{"0": 0, "-0": 0, "+12": 12, "0009": 9, "-9223372036854775808": -1 << 63} {
		if got, ok := ParseJavaLong(in); !ok || got != want {
			t.Errorf("ParseJavaLong(%q) = %d, %v; want %d", in, got, ok, want)
		}
	}
	for _, in := range []string{"", "-", "+", "1-", "--1", "9223372036854775808", " 1", "1e3", "0x1"} {
		if got, ok := ParseJavaLong(in); ok {
			t.Errorf("ParseJavaLong(%q) = %d, want a NumberFormatException", in, got)
		}
	}
	if _, ok := ParseJavaInt("2147483648"); ok {
		t.Error("ParseJavaInt accepts 2^31")
	}
	// every range of Go's Nd table is made of whole runs 0..9, which
	// javaDigit relies on
	for _, rg := range unicode.Nd.R16 {
		if rg.Stride != 1 || (int(rg.Hi)-int(rg.Lo)+1)%10 != 0 {
			t.Fatalf("Nd range %+v is not whole runs of ten digits", rg)
		}
	}
}

func TestOffsetInfo(t *testing.T) {
	var b []byte
	b = AppendOffsetInfo(b, OffsetInfo{0, 3, []int64{10, 12, 13}})
	b = AppendOffsetInfo(b, OffsetInfo{1, 0, []int64{4}})
	if string(b) != "0 3 10,12,13;1 0 4" {
		t.Fatalf("built %q", b)
	}
	got, err := ParseMsgOffsetInfo(string(b))
	if err != nil || len(got) != 2 || got[0].Key() != "0@3" || len(got[0].Offsets) != 3 {
		t.Fatalf("parse = %+v, %v", got, err)
	}
	if _, err := ParseStartOffsetInfo("0 3 1,2"); err == nil {
		t.Fatal("startOffsetInfo with two offsets accepted")
	}
	// retryFlag 2: a V2 retry topic's entry (enableRetryTopicV2), beside a
	// normal and a V1 one for the same queue id; its key keeps it apart.
	v2, err := ParseMsgOffsetInfo("0 3 10;1 3 4;2 3 7,9")
	if err != nil || len(v2) != 3 || v2[2].RetryFlag != 2 || v2[2].Key() != "2@3" || len(v2[2].Offsets) != 2 || v2[2].Offsets[1] != 9 {
		t.Fatalf("parse with a retryFlag 2 entry = %+v, %v", v2, err)
	}
	if b := AppendOffsetInfo(nil, v2[2]); string(b) != "2 3 7,9" {
		t.Fatalf("built a retryFlag 2 entry as %q", b)
	}
	if s, err := ParseStartOffsetInfo("2 0 5"); err != nil || s[0].RetryFlag != 2 || s[0].Offsets[0] != 5 {
		t.Fatalf("startOffsetInfo with retryFlag 2 = %+v, %v", s, err)
	}
	for _, bad := range []string{"0 3", "0 3 1;0 3 2", "x 1 1", "0 1 a", "0 -1 1", "3 1 1", "2 3 1;2 3 2"} {
		if _, err := ParseMsgOffsetInfo(bad); !errors.Is(err, ErrMalformedOffsetInfo) {
			t.Errorf("ParseMsgOffsetInfo(%q) = %v", bad, err)
		}
	}
}

func TestOrderCountInfo(t *testing.T) {
	var b []byte
	b = AppendOrderCount(b, OrderCount{0, 2, 17, 3})
	b = AppendOrderCount(b, OrderCount{0, 2, -1, 0})
	if string(b) != "0 qo2%17 3;0 2 0" {
		t.Fatalf("built %q", b)
	}
	got, err := ParseOrderCountInfo(string(b))
	if err != nil || len(got) != 2 || got[0] != (OrderCount{0, 2, 17, 3}) || got[1].Key() != "0@2" {
		t.Fatalf("parse = %+v, %v", got, err)
	}
	for _, bad := range []string{"0 qo2 3", "0 qo2%x 1", "0 2", "0 2 1;0 2 2"} {
		if _, err := ParseOrderCountInfo(bad); err == nil {
			t.Errorf("ParseOrderCountInfo(%q) accepted", bad)
		}
	}
}

func TestTopicNames(t *testing.T) {
	if BuildPopRetryTopicV1("t", "g") != "%RETRY%g_t" || BuildPopRetryTopicV2("t", "g") != "%RETRY%g+t" || BuildPopRetryTopic("t", "g", true) != "%RETRY%g+t" || DLQTopic("g") != "%DLQ%g" {
		t.Fatal("names")
	}
	if ParseNormalTopic("%RETRY%g+t", "g") != "t" || ParseNormalTopic("%RETRY%g_t", "g") != "t" || ParseNormalTopic("t", "g") != "t" {
		t.Fatal("ParseNormalTopic")
	}
	if !IsPopRetryTopicV2("%RETRY%g+t") || IsPopRetryTopicV2("%RETRY%g_t") {
		t.Fatal("IsPopRetryTopicV2")
	}
	if RetryFlagOf("%RETRY%g+t") != 2 || RetryFlagOf("%RETRY%g_t") != 1 || RetryFlagOf("%RETRY%g") != 1 || RetryFlagOf("t") != 0 {
		t.Fatal("RetryFlagOf")
	}
	if RealTopic("t", "g", 1) != "%RETRY%g_t" || RealTopic("t", "g", 0) != "t" {
		t.Fatal("RealTopic")
	}
	g, tp, v, err := ParseRetryTopic("%RETRY%g+t")
	if err != nil || g != "g" || tp != "t" || v != RetryTopicV2Type {
		t.Fatal("ParseRetryTopic V2")
	}
	if _, _, _, err := ParseRetryTopic("%RETRY%nosep"); err == nil {
		t.Fatal("ParseRetryTopic accepted a name without separator")
	}
	for _, bad := range []string{"", "a@b", "sp ace", "a+b", strings.Repeat("x", 128), "%RETRY%" + strings.Repeat("x", 249), "%DLQ%g+"} {
		if ValidateTopic(bad) == nil {
			t.Errorf("ValidateTopic(%q) accepted", bad)
		}
	}
	for _, good := range []string{"t", "%|_-", strings.Repeat("x", 127), "%RETRY%g+t", "%RETRY%" + strings.Repeat("x", 248), "%DLQ%" + strings.Repeat("g", 120)} {
		if err := ValidateTopic(good); err != nil {
			t.Errorf("ValidateTopic(%q): %v", good, err)
		}
	}
	if ValidateGroup(strings.Repeat("g", 120), MaxGroupLength) != nil || ValidateGroup(strings.Repeat("g", 121), MaxGroupLength) == nil ||
		ValidateGroup(strings.Repeat("g", 255), LegacyMaxGroupLength) != nil || ValidateGroup("g+h", MaxGroupLength) == nil {
		t.Error("ValidateGroup does not hold groups to RocketMQ's limits")
	}
	// the longest group and topic still give storable retry topics
	long := BuildPopRetryTopicV2(strings.Repeat("t", MaxTopicLength), strings.Repeat("g", MaxGroupLength))
	if len(long) != MaxRetryOrDLQTopicLength || ValidateTopic(long) != nil {
		t.Errorf("the longest V2 retry topic is %d characters", len(long))
	}
	if m := (Message{Topic: "%RETRY%" + strings.Repeat("x", 121)}); m.Validate() == nil {
		t.Error("a producer may send to a 128-character topic")
	}
}

func TestMessageProperties(t *testing.T) {
	m := &Message{Topic: "t"}
	if err := m.SetProperty("b", "2"); err != nil {
		t.Fatal(err)
	}
	_ = m.SetProperty("a", "1")
	_ = m.SetProperty(PropertyFirstPopTime, "77")
	if m.Properties[0].Key != "a" || m.FirstPopTime != 77 {
		t.Fatalf("properties %+v", m)
	}
	if v, ok := m.Property("b"); !ok || v != "2" {
		t.Fatal("Property lookup")
	}
	if err := m.SetProperty(PropertyFirstPopTime, "x"); err == nil {
		t.Fatal("bad 1ST_POP_TIME accepted")
	}
	c := m.Clone()
	c.Properties[0].Value = "changed"
	if m.Properties[0].Value != "1" {
		t.Fatal("Clone shares properties")
	}
	if (&Message{Topic: "bad topic"}).Validate() == nil {
		t.Fatal("Validate accepted a bad topic")
	}
}

// TestAppendDecMatchesStrconv: the offset infos' integer formatting is
// strconv's, at the edges of each digit count and of int64.
func TestAppendDecMatchesStrconv(t *testing.T) {
	vs := []int64{0, 1, 9, 10, 11, 99, 100, 499, 999, 1000, 65535, 1<<31 - 1, 1 << 40, 9223372036854775807, -1, -9, -10, -12345, -9223372036854775808}
	for p := int64(1); p > 0 && p < 1e18; p *= 10 {
		vs = append(vs, p-1, p, p+1)
	}
	for _, v := range vs {
		want := "x" + strconv.FormatInt(v, 10)
		// without spare room and with it: a digit alone is stored inline only with room
		for _, dst := range [][]byte{[]byte("x"), append(make([]byte, 0, 32), 'x')} {
			if got := string(AppendDec(dst, v)); got != want {
				t.Errorf("AppendDec(%d) into cap %d = %q, want %q", v, cap(dst), got, want)
			}
		}
	}
}

// appendJSONString copies a plain prefix at once, then escapes byte by
// byte: every position of an escape must come out the same.
func TestAppendJSONStringEscapes(t *testing.T) {
	cases := map[string]string{
		"":             `""`,
		"orders":       `"orders"`,
		`a"b`:          `"a\"b"`,
		`\x`:           `"\\x"`,
		"x\ny":         `"x\u000ay"`,
		"\x1f":         `"\u001f"`,
		"é/<>&" + "\"": `"é/<>&\""`,
		"ab\tc\"d\\e":  `"ab\u0009c\"d\\e"`,
	}
	for in, want := range cases {
		if got := string(appendJSONString([]byte("k:"), in)); got != "k:"+want {
			t.Errorf("appendJSONString(%q) = %s, want k:%s", in, got, want)
		}
	}
}
