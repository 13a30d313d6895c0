package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net/mail"
	"strings"

	"gateway/server/dashboard"
	"gateway/store"
)

// Team management by the operator, the same store operations as the dashboard's Members page:
// members (list, change a role, remove; the last owner is kept) and invitations (list,
// create, resend, revoke). Each change is recorded in the workspace's audit log.

// adminListLimit bounds the lists these commands print.
const adminListLimit = 1000

func adminMemberList(ctx context.Context, a *app, fs *flag.FlagSet, args []string) (any, error) {
	id := fs.Int64("account", 0, "account (workspace) id")
	if err := parseFlags(fs, args, "account"); err != nil {
		return nil, err
	}
	ms, err := a.store.MembersByAccount(ctx, *id, adminListLimit)
	if err != nil {
		return nil, err
	}
	return map[string]any{"account_id": *id, "members": ms}, nil
}

// memberByEmail is the account's member with the email (any case), with a message naming
// what is missing.
func memberByEmail(ctx context.Context, a *app, accountID int64, email string) (store.Member, error) {
	u, err := a.store.UserByEmail(ctx, email)
	if errors.Is(err, store.ErrNotFound) {
		return store.Member{}, fmt.Errorf("no user with email %q", email)
	} else if err != nil {
		return store.Member{}, err
	}
	m, err := a.store.MemberByID(ctx, accountID, u.ID)
	if errors.Is(err, store.ErrNotFound) {
		return store.Member{}, fmt.Errorf("%s is not a member of account %d", email, accountID)
	}
	return m, err
}

// memberChangeError names the refusal of a role change or removal.
func memberChangeError(err error, accountID int64, email string) error {
	switch {
	case errors.Is(err, store.ErrLastOwner):
		return fmt.Errorf("%s is the only owner of account %d: make another member an owner first", email, accountID)
	case errors.Is(err, store.ErrNotFound):
		return fmt.Errorf("%s is not a member of account %d", email, accountID)
	}
	return err
}

func adminMemberRole(ctx context.Context, a *app, fs *flag.FlagSet, args []string) (any, error) {
	id := fs.Int64("account", 0, "account (workspace) id")
	email := fs.String("email", "", "the member's email")
	role := fs.String("role", "", "owner or developer")
	if err := parseFlags(fs, args, "account", "email", "role"); err != nil {
		return nil, err
	}
	if *role != store.RoleOwner && *role != store.RoleDeveloper {
		return nil, errors.New("--role must be owner or developer")
	}
	m, err := memberByEmail(ctx, a, *id, *email)
	if err != nil {
		return nil, err
	}
	was, err := a.store.SetMemberRole(ctx, *id, m.UserID, *role)
	if err != nil {
		return nil, memberChangeError(err, *id, *email)
	}
	if was.Role != *role {
		operatorAudit(ctx, a, *id, store.AuditMemberRoleChanged, was.Email, was.Role+" → "+*role+" by the operator")
	}
	m.Role = *role
	return m, nil
}

func adminMemberRemove(ctx context.Context, a *app, fs *flag.FlagSet, args []string) (any, error) {
	id := fs.Int64("account", 0, "account (workspace) id")
	email := fs.String("email", "", "the member's email")
	if err := parseFlags(fs, args, "account", "email"); err != nil {
		return nil, err
	}
	m, err := memberByEmail(ctx, a, *id, *email)
	if err != nil {
		return nil, err
	}
	was, err := a.store.RemoveMember(ctx, *id, m.UserID)
	if err != nil {
		return nil, memberChangeError(err, *id, *email)
	}
	operatorAudit(ctx, a, *id, store.AuditMemberRemoved, was.Email, "role "+was.Role+"; by the operator")
	return map[string]any{"account_id": *id, "removed": was}, nil
}

func adminInvitationList(ctx context.Context, a *app, fs *flag.FlagSet, args []string) (any, error) {
	id := fs.Int64("account", 0, "account (workspace) id")
	if err := parseFlags(fs, args, "account"); err != nil {
		return nil, err
	}
	invs, err := a.store.PendingInvitations(ctx, *id, adminListLimit)
	if err != nil {
		return nil, err
	}
	return map[string]any{"account_id": *id, "invitations": invs}, nil
}

// invitationPrinted is a created or resent invitation with its link, printed once. The link
// is absolute when GATEWAY_PUBLIC_URL is set, else the dashboard path.
type invitationPrinted struct {
	store.Invitation
	Link string `json:"link"`
	Note string `json:"note"`
}

func printInvitation(a *app, inv store.Invitation, tok string) invitationPrinted {
	return invitationPrinted{Invitation: inv, Link: strings.TrimSuffix(a.cfg.Dashboard.BaseURL, "/") + dashboard.InvitationPath(tok),
		Note: "shown once; only an account with email " + inv.Email + " can accept it"}
}

func adminInvitationCreate(ctx context.Context, a *app, fs *flag.FlagSet, args []string) (any, error) {
	id := fs.Int64("account", 0, "account (workspace) id")
	email := fs.String("email", "", "the invited email")
	role := fs.String("role", store.RoleDeveloper, "owner or developer")
	if err := parseFlags(fs, args, "account", "email"); err != nil {
		return nil, err
	}
	if addr, err := mail.ParseAddress(*email); err != nil || addr.Address != *email {
		return nil, fmt.Errorf("--email %q is not an email address like name@example.com", *email)
	}
	if *role != store.RoleOwner && *role != store.RoleDeveloper {
		return nil, errors.New("--role must be owner or developer")
	}
	tok, hash, err := dashboard.NewInvitationToken()
	if err != nil {
		return nil, err
	}
	inv, err := a.store.CreateInvitation(ctx, *id, 0, *email, *role, hash, dashboard.InvitationTTL)
	if errors.Is(err, store.ErrNotFound) {
		return nil, fmt.Errorf("no account %d", *id)
	} else if err != nil {
		return nil, err
	}
	operatorAudit(ctx, a, *id, store.AuditUserInvited, inv.Email, "role "+inv.Role+"; by the operator")
	return printInvitation(a, inv, tok), nil
}

func adminInvitationResend(ctx context.Context, a *app, fs *flag.FlagSet, args []string) (any, error) {
	id := fs.Int64("account", 0, "account (workspace) id")
	invID := fs.Int64("id", 0, "invitation id (invitation list)")
	if err := parseFlags(fs, args, "account", "id"); err != nil {
		return nil, err
	}
	tok, hash, err := dashboard.NewInvitationToken()
	if err != nil {
		return nil, err
	}
	inv, err := a.store.RenewInvitation(ctx, *id, *invID, hash, dashboard.InvitationTTL)
	if errors.Is(err, store.ErrNotFound) {
		return nil, fmt.Errorf("account %d has no pending invitation %d", *id, *invID)
	} else if err != nil {
		return nil, err
	}
	operatorAudit(ctx, a, *id, store.AuditInvitationResent, inv.Email, "role "+inv.Role+"; new link; by the operator")
	return printInvitation(a, inv, tok), nil
}

func adminInvitationRevoke(ctx context.Context, a *app, fs *flag.FlagSet, args []string) (any, error) {
	id := fs.Int64("account", 0, "account (workspace) id")
	invID := fs.Int64("id", 0, "invitation id (invitation list)")
	if err := parseFlags(fs, args, "account", "id"); err != nil {
		return nil, err
	}
	inv, err := a.store.RevokeInvitation(ctx, *id, *invID)
	if errors.Is(err, store.ErrNotFound) {
		return nil, fmt.Errorf("account %d has no pending invitation %d", *id, *invID)
	} else if err != nil {
		return nil, err
	}
	operatorAudit(ctx, a, *id, store.AuditInvitationRevoked, inv.Email, "role "+inv.Role+"; by the operator")
	return inv, nil
}
