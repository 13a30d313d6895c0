package main

import "context"

// devSyncTemplates pulls the account's templates from the platform (wired once the messaging
// capability lands).
func devSyncTemplates(ctx context.Context, a *app, accountID int64) error { return nil }
