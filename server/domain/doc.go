// Package domain is the gateway's application layer: what the product does, in terms that are
// neither HTTP nor SQL. The REST API (package server) and the dashboard (server/dashboard)
// are siblings over it, and the workers and the operator commands use it too: the API key
// format and modes (apikey.go), the phone number rules (phone.go), the template sync over a
// TemplateSource (templates.go), the bodies of the events customers' webhooks receive
// (events.go), the send pipeline (send.go: recorded, sent through a Messenger, its outcome
// recorded) with its typed error (senderror.go), the template send in front of it
// (templatesend.go, templateparams.go), test mode's send (testsend.go), the dashboard form's
// send (formsend.go), the dashboard's session lifetimes (sessions.go), the platform's status
// reports applied to messages (statuses.go), the recording of what customers send: every
// message kind, edits, deletions and identity changes, with the opt-out words (inbound.go, and
// the content of each kind as events carry it in inbound_content.go), and the contacts and
// reports an account's key reads (records.go, contacts.go; testrecords.go for test and demo
// keys), and media: fetching a customer's file as a checked stream and uploading one for
// answers (media*.go).
//
// It talks to the database through the store package's types, and imports neither echo, nor
// net/http, nor database/sql (TestLayering in the root package holds this).
package domain
