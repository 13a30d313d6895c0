package main

import (
	"context"
	"errors"
	"flag"
	"fmt"

	"gateway/server/dashboard"
	"gateway/store"
)

// Dashboard users: the operator creates a user in a workspace, or resets a password. A
// generated password is printed once.

// adminUserCreate is `gateway admin user create`.
func adminUserCreate(ctx context.Context, a *app, fs *flag.FlagSet, args []string) (any, error) {
	id := fs.Int64("account", 0, "account (workspace) id")
	email := fs.String("email", "", "the user's email")
	role := fs.String("role", store.RoleOwner, "owner or developer")
	pw := newSecretInput(fs, "password", envAdminPassword, "the password (default: a generated one, printed once)")
	if err := parseFlags(fs, args, "account", "email"); err != nil {
		return nil, err
	}
	if *role != store.RoleOwner && *role != store.RoleDeveloper {
		return nil, errors.New("--role must be owner or developer")
	}
	password, generated, err := chosenPassword(a, pw)
	if err != nil {
		return nil, err
	}
	hash, err := dashboard.HashPassword(password)
	if err != nil {
		return nil, err
	}
	u, err := a.store.CreateUser(ctx, *id, *email, hash, *role)
	switch {
	case errors.Is(err, store.ErrEmailTaken):
		return nil, fmt.Errorf("a user with email %q exists (reset its password with gateway admin user reset-password)", *email)
	case errors.Is(err, store.ErrNotFound):
		return nil, fmt.Errorf("no account %d", *id)
	case err != nil:
		return nil, err
	}
	operatorAudit(ctx, a, *id, store.AuditUserCreated, u.Email, "as "+*role+" by the operator")
	return userPrinted{User: u, AccountID: *id, Role: *role, Password: generated}, nil
}

// adminUserResetPassword is `gateway admin user reset-password`.
func adminUserResetPassword(ctx context.Context, a *app, fs *flag.FlagSet, args []string) (any, error) {
	email := fs.String("email", "", "the user's email")
	pw := newSecretInput(fs, "password", envAdminPassword, "the new password (default: a generated one, printed once)")
	if err := parseFlags(fs, args, "email"); err != nil {
		return nil, err
	}
	u, err := a.store.UserByEmail(ctx, *email)
	if errors.Is(err, store.ErrNotFound) {
		return nil, fmt.Errorf("no user with email %q", *email)
	} else if err != nil {
		return nil, err
	}
	password, generated, err := chosenPassword(a, pw)
	if err != nil {
		return nil, err
	}
	hash, err := dashboard.HashPassword(password)
	if err != nil {
		return nil, err
	}
	// Every session of the user ends.
	if err := a.store.SetUserPassword(ctx, u.ID, hash, nil); err != nil {
		return nil, err
	}
	// The user's every workspace records it.
	ms, err := a.store.MembershipsByUser(ctx, u.ID)
	if err != nil {
		a.log.Warn("audit log: the user's workspaces", "error", err.Error())
	}
	for _, m := range ms {
		operatorAudit(ctx, a, m.AccountID, store.AuditPasswordChanged, u.Email, "reset by the operator; every session ended")
	}
	return userPrinted{User: u, Password: generated}, nil
}

// userPrinted is the command's output; Password is set only when it was generated.
type userPrinted struct {
	store.User
	AccountID int64  `json:"account_id,omitempty"`
	Role      string `json:"role,omitempty"`
	Password  string `json:"password,omitempty"`
}

// chosenPassword returns the password given (from a file, standard input or
// GATEWAY_ADMIN_PASSWORD; checked) or a generated one, and the generated one again for
// printing.
func chosenPassword(a *app, in *secretInput) (password, generated string, err error) {
	given, ok, err := in.read(a.cfg.getenv)
	if err != nil {
		return "", "", err
	}
	if ok {
		if err := dashboard.CheckNewPassword(given); err != nil {
			return "", "", fmt.Errorf("the password: %w", err)
		}
		return given, "", nil
	}
	p, err := dashboard.NewPassword()
	return p, p, err
}

// operatorAudit records an operator command in the workspace's audit log (shown as
// "operator"); a failure to record is logged, not returned: the command itself succeeded.
func operatorAudit(ctx context.Context, a *app, accountID int64, action, target, detail string) {
	if err := a.store.AddAudit(ctx, accountID, 0, action, target, detail); err != nil {
		a.log.Warn("audit log", "action", action, "error", err.Error())
	}
}
