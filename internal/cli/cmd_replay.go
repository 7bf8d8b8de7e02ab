package cli

import (
	"fmt"

	"github.com/spf13/cobra"

	"paydesk/api"
	"paydesk/internal/pushrelay"
)

func replayCmd(sio IO) *cobra.Command {
	var to, gateway string
	cmd := &cobra.Command{
		Use:   "replay FILE|KEY --to URL",
		Short: "Send a saved push (or a key's pushes from a sandbox) to a URL again, signed with a fresh timestamp",
		Long: `Replay re-signs a push for the target URL with a fresh timestamp, so a saved fixture never goes stale,
and prints the target's answer: status, time, an excerpt of its body. FILE is a push saved from the
console (the push log's fixture export) or any push body; KEY fetches that key's pushes from the
sandbox at --from (its signed admin endpoint). The credentials are the website key and secret,
as for every command.`,
		Example: "paydesk replay push-0042.json --to http://127.0.0.1:3000/payment/push\n" +
			"paydesk replay 4F1C…9A --from http://127.0.0.1:8800 --to http://127.0.0.1:3000/payment/push",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			getenv := getenvOf(sio)
			l, err := loadLayers(cmd.Flags(), getenv)
			if err != nil {
				fmt.Fprintf(sio.Stderr, "paydesk replay: %v\n", err)
				return exit(exitUsage)
			}
			websiteKey := l.value("website-key")
			if websiteKey == "" {
				fmt.Fprintln(sio.Stderr, "paydesk replay: --website-key (or $PAYDESK_WEBSITE_KEY, or website-key in the config file) is required")
				return exit(exitUsage)
			}
			secret, err := readSecret(l.value("secret-file"), getenv)
			if err != nil {
				fmt.Fprintf(sio.Stderr, "paydesk replay: %v\n", err)
				return exit(exitUsage)
			}
			s := pushrelay.Sender{Credentials: api.Credentials{WebsiteKey: websiteKey, SecretKey: secret}}
			return exit(pushrelay.ReplayArg(cmd.Context(), sio.Stdout, sio.Stderr, s, to, args[0], gateway))
		},
	}
	cmd.Flags().StringVar(&to, "to", "", "the URL to send the push to (your shop's push endpoint)")
	cmd.Flags().StringVar(&gateway, "from", "", "a sandbox's base URL, to fetch a KEY's pushes from")
	_ = cmd.MarkFlagRequired("to")
	return cmd
}
