// The TypeScript scenario of make sdkcheck: a client generated from the running gateway's
// /v1/openapi.json (openapi-typescript types, openapi-fetch calls), used as an integrator would.
// Fields the service always sends are read without `!` or `?? default`: if the description
// made them optional again, this file would stop compiling under --strict.
import { readFileSync } from "node:fs";
import createClient from "openapi-fetch";
import type { components, paths } from "./schema.js";
import { mediaSteps } from "./media.js";
import { answerSteps } from "./answers.js";

type Schemas = components["schemas"];

const keys = JSON.parse(readFileSync(process.env.SDKCHECK_KEYS ?? "keys.json", "utf8")) as {
  base_url: string;
  live_key: string;
  test_key: string;
  simulator_url: string;
};

function check(ok: boolean, what: string): asserts ok {
  if (!ok) throw new Error("sdkcheck (ts): " + what);
}

const api = (key?: string) =>
  createClient<paths>({
    baseUrl: keys.base_url + "/v1",
    headers: key ? { Authorization: `Bearer ${key}` } : {},
  });
const live = api(keys.live_key);
const test = api(keys.test_key);

// Me: mode is always sent.
const me = await live.GET("/me");
check(me.data !== undefined, `GET /me: ${me.response.status}`);
const mode: Schemas["KeyMode"] = me.data.data.mode;
check(mode === "live" && me.data.success === true, `GET /me mode ${mode}`);
check(me.data.data.chat.connected, "the dev account has a number");

// Templates: the variable counts are always sent.
const templates = await live.GET("/templates");
check(templates.data !== undefined, `GET /templates: ${templates.response.status}`);
const tpl = templates.data.data.templates.find((t) => t.name === "order_confirmation");
check(tpl !== undefined, "order_confirmation is approved");
const bodyVariables: number = tpl.body_variables;
const headerVariables: number = tpl.header_variables;
check(headerVariables === 0, `order_confirmation header variables ${headerVariables}`);

const testTemplates = await test.GET("/templates");
check(testTemplates.data !== undefined, "GET /templates with the test key");
check(
  testTemplates.data.data.templates.map((t) => `${t.id}:${t.name}`).join(",") ===
    "3:sandbox_welcome,2:order_confirmation_update,1:otp_login_code",
  "the test key sees the three sandbox templates with their documented ids",
);

// Send, then poll until delivered.
const sent = await live.POST("/messages/template", {
  body: {
    destination: "15551234567",
    template_name: tpl.name,
    body_variables: Array.from({ length: bodyVariables }, (_, i) => `v${i + 1}`),
  },
  params: { header: { "Idempotency-Key": `sdkcheck-ts-${Date.now()}` } },
});
check(sent.data !== undefined, `POST /messages/template: ${sent.response.status} ${JSON.stringify(sent.error)}`);
const messageId: number = sent.data.data.message_id;
let status: Schemas["MessageStatus"] = sent.data.data.status;
let history: Schemas["StatusChange"][] = [];
for (let i = 0; i < 100 && status !== "delivered" && status !== "read"; i++) {
  await new Promise((r) => setTimeout(r, 100));
  const m = await live.GET("/messages/{id}", { params: { path: { id: messageId } } });
  check(m.data !== undefined, `GET /messages/${messageId}: ${m.response.status}`);
  status = m.data.data.status;
  history = m.data.data.history;
}
check(status === "delivered" || status === "read", `message ${messageId} stayed ${status}`);
const first = history[0];
check(history.length >= 2 && first !== undefined && first.status === "sent", `history ${JSON.stringify(history)}`);

// Contacts: note is always sent.
const upsert = await live.POST("/contacts", { body: { mobile: "+55 (11) 98765-4321", firstname: "Ana", note: "sdkcheck" } });
check(upsert.data !== undefined, `POST /contacts: ${upsert.response.status}`);
const contacts = await live.GET("/contacts", { params: { query: { search: "98765", limit: 10 } } });
check(contacts.data !== undefined, `GET /contacts: ${contacts.response.status}`);
const contact = contacts.data.data.contacts[0];
check(contact !== undefined, "the contact is listed");
const note: string = contact.note;
check(note === "sdkcheck", `contact note ${note}`);

// Failures: typed envelopes with the codes of their status.
const noKey = await api().GET("/me");
check(noKey.response.status === 401 && noKey.error !== undefined, "GET /me without a key");
// The failures GET /me documents carry only their statuses' codes, not all fifteen.
const meCode: "unauthorized" | "account_inactive" | "rate_limited" | "internal_error" = noKey.error.code;
check(meCode === "unauthorized" && noKey.error.success === false, `401 code ${meCode}`);
check(noKey.response.headers.get("WWW-Authenticate") !== null, "401 challenge");

const missing = await live.GET("/messages/{id}", { params: { path: { id: 999999999 } } });
check(missing.response.status === 404 && missing.error !== undefined, "GET /messages/999999999");
check(missing.error.code === "not_found", `404 code ${missing.error.code}`);

const invalid = await live.POST("/messages/template", { body: { destination: "+1 555 123", template_name: "order_confirmation" } });
check(invalid.response.status === 422 && invalid.error !== undefined, "a bad destination");
check(invalid.error.code === "validation_failed" || invalid.error.code === "idempotency_conflict", "422 code");
check(invalid.response.status !== 422 || "errors" in invalid.error, "422 errors");
const reasons = (invalid.error as Schemas["ValidationErrorEnvelope"]).errors["destination"] ?? [];
check(reasons.some((r) => r.startsWith("digits only")), `destination reasons ${JSON.stringify(reasons)}`);

// Webhook events: one literal of each type, and a handler that narrows on `event`.
const received: Schemas["MessageReceivedEvent"] = {
  id: "evt_1", event: "message.received", created_at: "2026-11-21T10:05:00Z",
  data: { message_id: 1002, conversation_id: 77, contact_id: 501, from: "5511987654321", name: "Ana Souza", type: "text", text: "Is it in blue?" },
};
const sentEvent: Schemas["MessageSentEvent"] = {
  id: "evt_2", event: "message.sent", created_at: "2026-11-21T10:00:00Z",
  data: { message_id: 1001, chat_message_id: "wamid.X", conversation_id: 77, contact_id: 501, destination: "15551234567", template: "order_confirmation", source: "api" },
};
const statusEvent: Schemas["MessageStatusEvent"] = {
  id: "evt_3", event: "message.status", created_at: "2026-11-21T10:00:02Z", mode: "test",
  data: { message_id: 1001, chat_message_id: "wamid.X", conversation_id: 77, status: "delivered", timestamp: "2026-11-21T10:00:02Z" },
};
const contactEvent: Schemas["ContactCreatedEvent"] = {
  id: "evt_4", event: "contact.created", created_at: "2026-11-21T10:00:00Z",
  data: { contact_id: 501, mobile: "15551234567", name: "Ana Souza" },
};
const testEvent: Schemas["WebhookTestEvent"] = {
  id: "evt_5", event: "webhook.test", created_at: "2026-11-21T10:00:00Z", mode: "test",
  data: { endpoint_id: 3, message: "A test event sent from the dashboard" },
};
function describe(e: Schemas["WebhookEvent"]): string {
  switch (e.event) {
    case "message.received":
      return `${e.data.from}: ${e.data.type}`;
    case "message.sent":
      return `${e.data.template} to ${e.data.destination}`;
    case "message.status":
      return `${e.data.message_id} ${e.data.status} at ${e.data.timestamp}`;
    case "contact.created":
      return `${e.data.name} ${e.data.mobile}`;
    case "webhook.test":
      return `${e.data.endpoint_id}: ${e.data.message}`;
    case "message.received_without_number":
      return `${e.data.user_id}: ${e.data.type}`;
    case "message.edited":
      return `${e.data.message_id} edited at ${e.data.edited_at}`;
    case "message.deleted":
      return `${e.data.message_id} deleted at ${e.data.deleted_at}`;
    case "contact.created_without_number":
      return `${e.data.name} ${e.data.user_id}`;
    case "contact.updated":
      return `${e.data.contact_id} ${e.data.reason}`;
    case "broadcast.paused":
      return `${e.data.broadcast_id} paused: ${e.data.reason} until ${e.data.resume_at}`;
    case "broadcast.completed":
      return `${e.data.broadcast_id} completed: ${JSON.stringify(e.data.counts)}`;
  }
}
for (const e of [received, sentEvent, statusEvent, contactEvent, testEvent]) describe(e);
const examples = await live.GET("/events/examples");
check(examples.data !== undefined, `GET /events/examples: ${examples.response.status}`);
const names = examples.data.data.events.map((e) => (describe(e), e.event));
check(names.join(",") === "message.received,message.sent,message.status,contact.created,webhook.test,message.received_without_number,message.edited,message.deleted,contact.created_without_number,contact.updated,broadcast.paused,broadcast.completed", `examples ${names}`);

// Media: receive an image and fetch it, upload a file (media.ts).
const phoneNumberID = me.data.data.chat.phone_number_id;
const media = await mediaSteps(live, keys.simulator_url, phoneNumberID, check);
console.log(`sdkcheck (ts): media: ${media.summary}`);

// Answers: inside and after the window, with the upload, to a user id; the union narrowed (answers.ts).
console.log(`sdkcheck (ts): answers: ${await answerSteps(live, keys.simulator_url, phoneNumberID, media.uploaded, check)}`);

console.log(`sdkcheck (ts): me, templates, send ${messageId} → ${status}, contacts, 401, 404, 422 and ${names.length} event types OK`);
