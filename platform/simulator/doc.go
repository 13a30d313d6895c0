// Package simulator is a fake WhatsApp Cloud API (Meta's Graph API) served over
// real HTTP, for end-to-end tests, benchmarks and local runs.
//
// It is written from Meta's published wire format of the Cloud API, independently of
// the gateway's own Graph client, so that it can catch that client's bugs. It implements:
//
//   - POST /{version}/{phone-number-id}/messages (template sends and every
//     non-template kind: text, media by id or link, location, contacts,
//     reaction, interactive buttons and lists; to a number or, with
//     "recipient", to a business-scoped user id; read receipts) with Meta's
//     validation, error bodies and HTTP statuses: 190, 100/33, 132000,
//     132001, 132005, 132012, 132015, 132016, 130429, 131056, 131053, the
//     service window's 131047 (handsets.go), scripted others;
//   - the platform's limits on bulk sending (limits.go), per number and per
//     business portfolio: throughput per clock second (130429), the pair rate
//     with bursts (131056), a throughput upgrade window (131057), the
//     portfolio's 24 h unique-recipient budget (past it sends are accepted and
//     never delivered) and the per-user marketing limit (131049), with the
//     sends accepted in each second readable for assertions;
//   - media (media.go): GET /{version}/{media-id} (a URL valid 5 minutes,
//     fetched with the token), POST /{version}/{phone-number-id}/media
//     (uploads checked against the platform's types and sizes), DELETE;
//     media of inbound messages is generated deterministically, never stored;
//   - GET /{version}/{waba-id}/message_templates with filters and cursor paging;
//   - GET /{version}/{phone-number-id} (the number's public fields);
//   - a Tech Provider's onboarding (onboarding.go): GET /{version}/oauth/access_token
//     (single-use codes expiring after 30 s), POST/GET /{version}/{waba-id}/subscribed_apps,
//     POST /{version}/{phone-number-id}/register (two-step pin, 133005, 133016),
//     GET /{version}/{waba-id}/phone_numbers; sends from an unregistered number fail
//     with 133010, and a new business's webhooks wait for the app's subscription;
//   - the browser side of Embedded Signup (signup.go): a stand-in of Meta's
//     JavaScript SDK at /sdk.js and its sign-up window, where each Finish creates a
//     fresh WABA and number seeded with the default templates;
//   - signed webhooks (X-Hub-Signature-256) for statuses, inbound messages of
//     every kind (with the sender's business-scoped user id, username-only
//     senders without a number, number and user-id changes), and
//     template status updates (and account_update, phone_number_quality_update),
//     retried with compressed backoff;
//   - a control API under /_sim/ and Go methods to set numbers, templates,
//     per-recipient outcomes and configuration, and to read what was sent.
//
// Any version prefix of the form v{N}.{M} is accepted. New starts the webhook
// sender; Close stops it and the HTTP server started by Start.
package simulator
