package main

import (
	"context"
	"fmt"
	"io"
)

// bench is the load tool; see gateway bench -h.
func bench(ctx context.Context, cfg config, args []string, stdout io.Writer) error {
	return fmt.Errorf("bench: not built yet")
}
