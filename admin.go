package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"strings"
)

// adminCommand is one `gateway admin <group> <verb>` operation: it parses its flags and
// returns the one JSON object to print.
type adminCommand struct {
	name    string // "group verb"
	usage   string // its flags
	summary string // what it does, one line
	run     func(ctx context.Context, a *app, fs *flag.FlagSet, args []string) (any, error)
}

// adminCommands is every operator command, in the order `gateway admin help` lists them. The
// functions live in the admin_*.go file of their group. Secrets are never arguments: a
// --*-file flag ("-" for standard input) or an environment variable gives them
// (admin_secretinput.go).
var adminCommands = []adminCommand{
	{"account create", "--name N --email E", "create an account (workspace)", adminAccountCreate},
	{"account activate", "--account ID", "let a deactivated account use the API again", adminAccountSetActive(true)},
	{"account deactivate", "--account ID", "refuse the account's API calls", adminAccountSetActive(false)},
	{"key create", "--account ID --mode live|test", "issue an API key (printed once)", adminKeyCreate},
	{"key revoke", "--key ID", "revoke an API key", adminKeyRevoke},
	{"number connect", "--account ID --waba-id W --phone-number-id P --phone-number N --display-name D --access-token-file FILE|-",
		"store a number's connection as given", adminNumberConnect},
	{"number connect-token", "--account ID --waba-id W --phone-number-id P --access-token-file FILE|-",
		"connect a number with a system-user token checked against the platform", adminNumberConnectToken},
	{"number disconnect", "--account ID", "remove the account's number", adminNumberDisconnect},
	{"contact block", "--account ID --mobile M", "block a contact", adminContactSetBlocked(true)},
	{"contact unblock", "--account ID --mobile M", "unblock a contact", adminContactSetBlocked(false)},
	{"templates sync", "--account ID", "pull the account's templates from the platform", adminTemplatesSync},
	{"webhook create", "--account ID --url URL", "register a webhook endpoint (its secret is printed once)", adminWebhookCreate},
	{"webhook list", "--account ID", "list the account's webhook endpoints", adminWebhookList},
	{"webhook delete", "--webhook ID", "delete a webhook endpoint", adminWebhookDelete},
	{"webhook enable", "--webhook ID", "enable a webhook endpoint", adminWebhookSetEnabled(true)},
	{"webhook disable", "--webhook ID", "disable a webhook endpoint", adminWebhookSetEnabled(false)},
	{"deliveries list", "--account ID [--status failed|pending|succeeded|dead] [--limit N]",
		"list webhook deliveries, newest first", adminDeliveriesList},
	{"deliveries redeliver", "--delivery ID", "attempt a delivery again", adminDeliveriesRedeliver},
	{"deadletters list", "[--limit N]", "platform webhook items that could not be applied", adminDeadLettersList},
	{"secrets rotate", "(GATEWAY_SECRET_KEY = new key, GATEWAY_SECRET_KEY_PREVIOUS = old key)",
		"re-seal every secret at rest with the new key", adminSecretsRotate},
	{"user create", "--account ID --email E [--role owner|developer] [--password-file FILE|-]",
		"create a dashboard user (a generated password is printed once)", adminUserCreate},
	{"user reset-password", "--email E [--password-file FILE|-]", "replace a user's password and end their sessions", adminUserResetPassword},
	{"member list", "--account ID", "list the workspace's members and their roles", adminMemberList},
	{"member role", "--account ID --email E --role owner|developer", "change a member's role (the last owner is kept)", adminMemberRole},
	{"member remove", "--account ID --email E", "remove a member and end their sessions (the last owner is kept)", adminMemberRemove},
	{"invitation list", "--account ID", "list the workspace's pending invitations", adminInvitationList},
	{"invitation create", "--account ID --email E [--role owner|developer]",
		"invite an email (the link is printed once; only that email can accept it)", adminInvitationCreate},
	{"invitation resend", "--account ID --id N", "give a pending invitation a new link and expiry (printed once)", adminInvitationResend},
	{"invitation revoke", "--account ID --id N", "revoke a pending invitation", adminInvitationRevoke},
}

// findAdminCommand returns the command named "group verb".
func findAdminCommand(name string) (adminCommand, bool) {
	for _, c := range adminCommands {
		if c.name == name {
			return c, true
		}
	}
	return adminCommand{}, false
}

// adminHelp is `gateway admin help`: every command of the table with its flags and summary.
func adminHelp() string {
	var b strings.Builder
	b.WriteString("usage:\n")
	for _, c := range adminCommands {
		fmt.Fprintf(&b, "  gateway admin %s %s\n      %s\n", c.name, c.usage, c.summary)
	}
	return b.String()
}

// admin runs one operator command and prints its result as one JSON object on stdout; failures
// go to stderr (via main) with a non-zero exit.
func admin(ctx context.Context, cfg config, args []string, stdout, stderr io.Writer) error {
	if len(args) < 2 || args[0] == "help" {
		fmt.Fprint(stdout, adminHelp())
		if len(args) > 0 && args[0] == "help" {
			return nil
		}
		return fmt.Errorf("admin needs a command")
	}
	name := args[0] + " " + args[1]
	cmd, ok := findAdminCommand(name)
	if !ok {
		return fmt.Errorf("unknown admin command %q (gateway admin help)", name)
	}
	logger := cfg.logger(stderr)
	if err := cfg.refuseDevelopmentValues("run gateway admin "+name, logger); err != nil {
		return err
	}
	cfg.Migrate = false
	a, err := openApp(ctx, cfg, logger)
	if err != nil {
		return err
	}
	defer a.close()
	fs := flag.NewFlagSet("gateway admin "+name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	out, err := cmd.run(ctx, a, fs, args[2:])
	if err != nil {
		return err
	}
	enc := json.NewEncoder(stdout)
	enc.SetEscapeHTML(false)
	return enc.Encode(out)
}

// parseFlags parses args and checks that every named flag was given.
func parseFlags(fs *flag.FlagSet, args []string, required ...string) error {
	if err := fs.Parse(args); err != nil {
		return err
	}
	seen := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { seen[f.Name] = true })
	for _, r := range required {
		if !seen[r] {
			return fmt.Errorf("--%s is required", r)
		}
	}
	return nil
}
