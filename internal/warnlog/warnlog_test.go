package warnlog

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"
)

func TestHandler(t *testing.T) {
	var buf bytes.Buffer
	l := slog.New(Handler(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug}))).With("k", "v").WithGroup("g")
	for _, tc := range []struct {
		level slog.Level
		kept  bool
	}{
		{slog.LevelDebug, false},
		{slog.LevelInfo, false},
		{slog.LevelWarn, true},
		{slog.LevelError, true},
	} {
		buf.Reset()
		l.Log(t.Context(), tc.level, "msg", "a", 1)
		got := buf.String()
		if kept := got != ""; kept != tc.kept {
			t.Errorf("%v: logged %q, want kept=%v", tc.level, got, tc.kept)
		}
		if tc.kept && !strings.Contains(got, "k=v g.a=1") {
			t.Errorf("%v: %q lost the attributes or the group", tc.level, got)
		}
	}
}

func TestDefault(t *testing.T) {
	var buf bytes.Buffer
	old := slog.Default()
	slog.SetDefault(slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug})))
	defer slog.SetDefault(old)
	l := Default()
	l.Info("info")
	l.Warn("warn")
	if got := buf.String(); strings.Contains(got, "info") || !strings.Contains(got, "level=WARN msg=warn") {
		t.Errorf("slog.Default() got %q, want the warning only", got)
	}
}
