// Package webhook holds the protocol pieces of customer webhook delivery:
// secrets and signatures, the headers of one delivery attempt, a hardened
// HTTP sender that refuses private destinations at dial time, and the retry
// schedule. It has no database access; the outbox dispatcher in server/
// claims deliveries, calls Sender.Send, records each Result and schedules the
// next attempt with RetryDelay.
//
// A delivery carries two signatures over the same raw body:
//
//   - X-Service-Signature: "sha256=" + hex HMAC-SHA256(body), keyed with the
//     secret string exactly as shown to the customer ("whsec_...").
//   - webhook-signature (Standard Webhooks): "v1," + base64
//     HMAC-SHA256(webhook-id + "." + webhook-timestamp + "." + body), keyed
//     with the base64-decoded part of the secret after "whsec_". It lets a
//     receiver reject replays by checking webhook-timestamp.
package webhook
