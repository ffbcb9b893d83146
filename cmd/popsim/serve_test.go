package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestServeBadInput(t *testing.T) {
	dir := t.TempDir()
	typo := filepath.Join(dir, "typo.yaml")
	if err := os.WriteFile(typo, []byte("ack_los: 0.1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"serve", "-path", "fs"}, `want "checkpoint" (RocketMQ's default) or "kv"`},
		{[]string{"serve", "-topics", "orders:0"}, "0 queues: want 1..1024"},
		{[]string{"serve", "-topics", "bad name"}, "topic name"},
		{[]string{"serve", "-ack-loss", "2"}, "ack_loss = 2: want a fraction"},
		{[]string{"serve", "-faults", filepath.Join(dir, "missing.yaml")}, "faults file"},
		{[]string{"serve", "-faults", typo}, "field ack_los not found"},
		{[]string{"serve", "extra"}, "unexpected argument"},
	} {
		_, errs := wantCode(t, exitBadInput, c.args...)
		if !strings.Contains(errs, c.want) {
			t.Errorf("popsim %s: stderr %q lacks %q", strings.Join(c.args, " "), errs, c.want)
		}
	}
}

func TestServeStartsAndStops(t *testing.T) {
	faults := filepath.Join(t.TempDir(), "faults.yaml")
	if err := os.WriteFile(faults, []byte("ack_loss: 0.5\ndelay: 100ms\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// -for ends the run by itself; the flag overrides the file's ack_loss.
	out, _ := wantCode(t, exitOK, "serve", "-addr", "127.0.0.1:0", "-topics", "orders:2", "-groups", "billing",
		"-faults", faults, "-ack-loss", "0.25", "-for", "100ms")
	for _, want := range []string{"serving apache.rocketmq.v2.MessagingService on 127.0.0.1:", "TLS, self-signed, path checkpoint",
		"faults: ack_loss=0.25 delay=100ms", "stopped: 0 sent"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}
