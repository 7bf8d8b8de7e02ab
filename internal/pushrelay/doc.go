// Package pushrelay sends pushes on to a developer's own shop: Replay
// re-signs a saved push with a fresh timestamp and posts it to a URL
// (`paydesk replay FILE|KEY --to URL`); a Forwarder relays every push the
// listener verified, re-signed for the shop's URL, and reports the shop's
// answer beside it (`paydesk listen --forward-to URL`), as `stripe listen
// --forward-to` does. Pushes are signed with the merchant's credentials
// over the target URL, exactly as the gateway signs them, so the shop's
// own signature check runs unchanged.
package pushrelay
