package main

import (
	"context"
	"flag"
	"fmt"
	"strings"

	"gateway/store"
)

// adminSecretsRotate is `gateway admin secrets rotate`, the key rotation: GATEWAY_SECRET_KEY
// is the new key, GATEWAY_SECRET_KEY_PREVIOUS the old one; every secret at rest is re-sealed
// with the new key (bound to its row), after which the previous key can be dropped. Rows no
// key opens are listed and make the command fail.
func adminSecretsRotate(ctx context.Context, a *app, fs *flag.FlagSet, args []string) (any, error) {
	if err := parseFlags(fs, args); err != nil {
		return nil, err
	}
	res, err := a.store.ResealSecrets(ctx)
	if err != nil {
		return nil, err
	}
	for _, id := range res.Accounts {
		operatorAudit(ctx, a, id, store.AuditSecretsResealed, "", "by the operator: the stored access token and webhook secrets sealed with a new key")
	}
	if len(res.Unreadable) > 0 {
		return nil, fmt.Errorf("re-sealed %d connections and %d webhook endpoints; no key opens: %s",
			res.Connections, res.WebhookEndpoints, strings.Join(res.Unreadable, ", "))
	}
	return res, nil
}
