package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"sort"
	"strings"
)

// adminCommand is one `gateway admin <group> <verb>` operation: it parses its flags and
// returns the one JSON object to print.
type adminCommand struct {
	usage string
	run   func(ctx context.Context, a *app, fs *flag.FlagSet, args []string) (any, error)
}

// adminCommands is filled by the admin_*.go files, keyed "group verb".
var adminCommands = map[string]adminCommand{}

func registerAdmin(name, usage string, run func(ctx context.Context, a *app, fs *flag.FlagSet, args []string) (any, error)) {
	adminCommands[name] = adminCommand{usage: usage, run: run}
}

// admin runs one operator command and prints its result as one JSON object on stdout; failures
// go to stderr (via main) with a non-zero exit.
func admin(ctx context.Context, cfg config, args []string, stdout, stderr io.Writer) error {
	if len(args) < 2 || args[0] == "help" {
		var names []string
		for n, c := range adminCommands {
			names = append(names, "  gateway admin "+n+" "+c.usage)
		}
		sort.Strings(names)
		fmt.Fprintln(stdout, "usage:\n"+strings.Join(names, "\n"))
		if len(args) > 0 && args[0] == "help" {
			return nil
		}
		return fmt.Errorf("admin needs a command")
	}
	name := args[0] + " " + args[1]
	cmd, ok := adminCommands[name]
	if !ok {
		return fmt.Errorf("unknown admin command %q (gateway admin help)", name)
	}
	cfg.Migrate = false
	a, err := openApp(ctx, cfg, cfg.logger(stderr))
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
