package main

import (
	"context"
	"flag"
	"unicode/utf8"

	"gateway/store"
)

// adminDeadLettersList is `gateway admin deadletters list`: the platform webhook items that
// could not be applied (see server/platformhook.go), newest first, with their error and the
// item as received.
func adminDeadLettersList(ctx context.Context, a *app, fs *flag.FlagSet, args []string) (any, error) {
	limit := fs.Int("limit", 50, "how many, newest first")
	if err := parseFlags(fs, args); err != nil {
		return nil, err
	}
	ds, err := a.store.DeadLetters(ctx, *limit)
	if err != nil {
		return nil, err
	}
	type shown struct {
		store.DeadLetter
		// Item is the item as received: JSON text when it is valid UTF-8, else its bytes
		// (base64 in the JSON output).
		Item      string `json:"item,omitempty"`
		ItemBytes []byte `json:"item_bytes,omitempty"`
	}
	out := make([]shown, len(ds))
	for i, d := range ds {
		out[i] = shown{DeadLetter: d}
		if utf8.Valid(d.Item) {
			out[i].Item = string(d.Item)
		} else {
			out[i].ItemBytes = d.Item
		}
	}
	return map[string]any{"dead_letters": out}, nil
}
