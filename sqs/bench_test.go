package sqs

// Hot-path benchmark: receive (batches of 10) and delete, per message, on a
// standard and a FIFO queue with a backlog of visible messages. Messages
// are sent before the timer starts; the backlog stays at least its nominal
// size while the benchmark runs. Besides wall ns/msg it reports
// cpu-ns/msg (process CPU time, garbage collection included), steadier on
// a shared machine.
//
//	go test ./sqs -run '^$' -bench ReceiveDelete -benchtime 2s -count 5
//
// None of it runs under a plain `go test`.

import (
	"strconv"
	"syscall"
	"testing"

	"popsim/clock"
	"popsim/model"
)

func BenchmarkReceiveDelete(b *testing.B) {
	for _, c := range []struct {
		name    string
		fifo    bool
		backlog int
		groups  int
	}{
		{"standard/backlog=1k", false, 1000, 0},
		{"standard/backlog=100k", false, 100000, 0},
		{"fifo/groups=100/backlog=1k", true, 1000, 100},
		{"fifo/groups=10k/backlog=100k", true, 100000, 10000},
	} {
		b.Run(c.name, func(b *testing.B) { benchReceiveDelete(b, c.fifo, c.backlog, c.groups) })
	}
}

func benchReceiveDelete(b *testing.B, fifo bool, backlog, groups int) {
	s, err := New(DefaultConfig())
	if err != nil {
		b.Fatal(err)
	}
	now := clock.Epoch
	name, attrs := "q", map[string]string{AttrMessageRetentionPeriod: strconv.Itoa(MaxRetentionSeconds)}
	if fifo {
		name = "q.fifo"
		attrs[AttrFifoQueue], attrs[AttrContentBasedDeduplication] = "true", "true"
	}
	if r := s.CreateQueue(now, name, attrs); r.Err != nil {
		b.Fatal(r.Err)
	}
	body := []byte("payload-0123456789")
	n := backlog + b.N + 10
	for i := 0; i < n; i++ {
		req := SendMessageRequest{Queue: name, MsgID: model.MsgID(i + 1), MessageBody: body}
		if fifo {
			req.MessageGroupID = "g" + strconv.Itoa(i%groups)
			req.MessageDeduplicationID = strconv.Itoa(i)
		}
		if r := s.SendMessage(now, &req); r.Err != nil {
			b.Fatal(r.Err)
		}
	}
	recv := ReceiveMessageRequest{Queue: name, MaxNumberOfMessages: Some(10)}
	del := DeleteMessageRequest{Queue: name}
	b.ReportAllocs()
	cpu0 := cpuTime()
	b.ResetTimer()
	for done := 0; done < b.N; {
		now = now.Add(clock.Millisecond)
		r := s.ReceiveMessage(now, &recv)
		if len(r.Messages) == 0 {
			b.Fatalf("receive found nothing after %d messages: %+v", done, r)
		}
		for i := range r.Messages {
			del.ReceiptHandle = r.Messages[i].ReceiptHandle
			if d := s.DeleteMessage(now, &del); !d.Deleted {
				b.Fatalf("delete: %+v", d)
			}
		}
		done += len(r.Messages)
	}
	b.StopTimer()
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N), "ns/msg")
	b.ReportMetric(float64(cpuTime()-cpu0)/float64(b.N), "cpu-ns/msg")
	if err := s.CheckInvariants(); err != nil {
		b.Fatal(err)
	}
}

// cpuTime is the process's user+system CPU time in nanoseconds: on a
// shared machine it moves less with other jobs than the wall clock does.
func cpuTime() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}
