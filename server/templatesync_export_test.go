package server

import "context"

// RunOnce exposes one pass of the template syncer to the external tests.
func (t *TemplateSyncer) RunOnce(ctx context.Context) (synced, failed int) { return t.runOnce(ctx) }
