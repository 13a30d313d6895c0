package main

import (
	"context"
	"flag"
	"fmt"

	"gateway/store"
)

// adminTemplatesSync is `gateway admin templates sync`.
func adminTemplatesSync(ctx context.Context, a *app, fs *flag.FlagSet, args []string) (any, error) {
	id := fs.Int64("account", 0, "account id")
	if err := parseFlags(fs, args, "account"); err != nil {
		return nil, err
	}
	res, err := a.server.SyncTemplates(ctx, *id)
	if err == nil {
		operatorAudit(ctx, a, *id, store.AuditTemplatesSynced, "",
			fmt.Sprintf("by the operator: %d fetched, %d approved", res.Fetched, res.Approved))
	}
	return res, err
}

// devSyncTemplates pulls the account's templates from the platform (the simulator under
// `make run`).
func devSyncTemplates(ctx context.Context, a *app, accountID int64) error {
	_, err := a.server.SyncTemplates(ctx, accountID)
	return err
}
