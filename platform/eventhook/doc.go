// Package eventhook holds the protocol pieces of customers' outbound webhooks (the events
// the gateway POSTs to the endpoints a business registers; the platform's inbound webhook is
// elsewhere, in platform/whatsapp and server/platformhook.go):
// secrets and signatures, the headers of one delivery attempt, a hardened
// HTTP sender that refuses private destinations at dial time, and the retry
// schedule. It has no database access; the outbox dispatcher in server/
// claims deliveries, calls Sender.Send, records each Result and schedules the
// next attempt with RetryDelay.
//
// A delivery carries three signatures over the same raw body:
//
//   - X-Service-Signature: "sha256=" + hex HMAC-SHA256(body), keyed with the
//     secret string exactly as shown to the customer ("whsec_..."). It covers
//     no timestamp, so a captured delivery verifies again later; its format is
//     fixed by the v1 contract and receivers compare it as is.
//   - X-Service-Timestamp-Signature: "sha256=" + hex
//     HMAC-SHA256(X-Service-Timestamp + "." + body), keyed as above: the same
//     scheme with the time bound in, for receivers that reject old timestamps.
//   - webhook-signature (Standard Webhooks): "v1," + base64
//     HMAC-SHA256(webhook-id + "." + webhook-timestamp + "." + body), keyed
//     with the base64-decoded part of the secret after "whsec_". It lets a
//     receiver reject replays by checking webhook-timestamp.
//
// During a secret rotation's overlap the two timestamped headers carry the
// previous secret's signature too, and X-Service-Signature-Previous is
// X-Service-Signature made with the previous secret.
package eventhook
