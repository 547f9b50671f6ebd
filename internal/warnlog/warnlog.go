package warnlog

import (
	"context"
	"log/slog"
)

// Default returns a logger that passes the records of Warn level and
// above to slog.Default()'s handler of the moment.
func Default() *slog.Logger { return slog.New(Handler(slog.Default().Handler())) }

// Handler returns a handler that passes the records of Warn level and
// above to h, and drops the others.
func Handler(h slog.Handler) slog.Handler { return warnings{h} }

// warnings passes the records of Warn level and above to h.
type warnings struct{ h slog.Handler }

func (w warnings) Enabled(ctx context.Context, l slog.Level) bool {
	return l >= slog.LevelWarn && w.h.Enabled(ctx, l)
}
func (w warnings) Handle(ctx context.Context, r slog.Record) error { return w.h.Handle(ctx, r) }
func (w warnings) WithAttrs(as []slog.Attr) slog.Handler           { return warnings{w.h.WithAttrs(as)} }
func (w warnings) WithGroup(name string) slog.Handler              { return warnings{w.h.WithGroup(name)} }
