// Package whatsapp speaks Meta's WhatsApp Cloud API (the Graph API) for the gateway.
//
// The outbound side is [Client]: template and text sends and the template listing,
// with Graph errors decoded into [*Error] and transport failures reported as
// [ErrUnavailable]. The inbound side is [VerifySignature], [VerifyChallenge] and
// [ParseWebhook], which decodes webhook deliveries leniently: unknown fields,
// change fields and message types are kept, never rejected. Every inbound kind the
// platform documents is typed ([InboundMessage]), with its sender joined from the
// contacts ([Sender]: wa_id, business-scoped user id, username); a message that
// cannot be typed comes back with Err set, for the caller to dead-letter.
//
// The package uses only the standard library and imports nothing else from this module.
// Field names and codes follow Meta's published Cloud API reference; the simulator
// (platform/simulator) implements the same wire format independently.
package whatsapp
