package main

import (
	"context"
	"flag"
)

// adminTemplatesSync is `gateway admin templates sync`.
func adminTemplatesSync(ctx context.Context, a *app, fs *flag.FlagSet, args []string) (any, error) {
	id := fs.Int64("account", 0, "account id")
	if err := parseFlags(fs, args, "account"); err != nil {
		return nil, err
	}
	return a.server.SyncTemplates(ctx, *id)
}

// devSyncTemplates pulls the account's templates from the platform (the simulator under
// `make run`).
func devSyncTemplates(ctx context.Context, a *app, accountID int64) error {
	_, err := a.server.SyncTemplates(ctx, accountID)
	return err
}
