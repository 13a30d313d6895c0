// Package domain is the gateway's application layer: what the product does, in terms that are
// neither HTTP nor SQL. The REST API (package server) and the dashboard (server/dashboard)
// are siblings over it, and the workers and the operator commands use it too: the API key
// format and modes (apikey.go), the phone number rules (phone.go), the template sync over a
// TemplateSource (templates.go), the bodies of the events
// customers' webhooks receive (events.go), the shape of a send from the dashboard's form and
// its typed refusal (formsend.go), the dashboard's session lifetimes (sessions.go), and media:
// fetching a customer's file as a checked stream and uploading one for answers (media*.go).
//
// It talks to the database through the store package's types, and imports neither echo, nor
// net/http, nor database/sql (TestLayering in the root package holds this).
package domain
