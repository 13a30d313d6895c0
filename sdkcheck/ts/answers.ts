// The answer steps of the TypeScript scenario (make sdkcheck): a simulated handset writes, and
// the business answers inside the service window (text, then an uploaded image); a handset whose
// last message is 25 hours old gets the 409 window_closed; a username-only sender is answered
// by user id; message.received's per-kind union is narrowed on `type` without casts.
import type { Client } from "openapi-fetch";
import type { components, paths } from "./schema.js";

type Schemas = components["schemas"];
type Check = (ok: boolean, what: string) => asserts ok;

// A handset sends a text to the dev number through the simulator's control API.
async function handsetWrites(simulatorURL: string, phoneNumberID: string, sender: Record<string, unknown>, check: Check): Promise<void> {
  const r = await fetch(`${simulatorURL}/_sim/inbound`, {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify({ phone_number_id: phoneNumberID, name: "Ana", type: "text", payload: { body: "Is it in blue?" }, ...sender }),
  });
  check(r.ok, `the simulator's handset did not write: ${r.status} ${await r.text()}`);
}

const pause = () => new Promise((r) => setTimeout(r, 100));

// What the received kind carries, read from the narrowed member: each case reads a field only
// its kind has, which compiles only while `type` narrows the union.
export function kindSummary(d: Schemas["MessageReceivedData"]): string {
  switch (d.type) {
    case "text":
      return `text ${d.text}`;
    case "image":
      return `image ${d.image.id}`;
    case "audio":
      return `audio ${d.audio.id}${d.audio.voice ? " (voice)" : ""}`;
    case "location":
      return `location ${d.location.latitude},${d.location.longitude}`;
    case "reaction":
      return `reaction ${d.reaction.emoji}`;
    default:
      return d.type;
  }
}

export async function answerSteps(live: Client<paths>, simulatorURL: string, phoneNumberID: string, uploadedImage: string, check: Check): Promise<string> {
  // Inside the window: the handset writes, the business answers with text, then with the
  // image it uploaded. The webhook is recorded by the gateway as it arrives; a few retries
  // cover the moment before it is.
  const inside = "15551230101";
  await handsetWrites(simulatorURL, phoneNumberID, { from: inside }, check);
  const textBody: Schemas["SendMessageRequest"] = { destination: inside, type: "text", text: { body: "Yes, in blue and navy" } };
  let text = await live.POST("/messages", { body: textBody });
  for (let i = 0; i < 50 && text.response.status === 409; i++) {
    await pause();
    text = await live.POST("/messages", { body: textBody });
  }
  check(text.data !== undefined, `POST /messages (text inside the window): ${text.response.status} ${JSON.stringify(text.error)}`);
  check(text.data.data.type === "text" && text.data.data.status === "sent", `text answer ${JSON.stringify(text.data.data)}`);
  const image = await live.POST("/messages", { body: { destination: inside, type: "image", image: { id: uploadedImage, caption: "The blue one" } } });
  check(image.data !== undefined, `POST /messages (uploaded image): ${image.response.status} ${JSON.stringify(image.error)}`);
  check(image.data.data.type === "image", `image answer ${JSON.stringify(image.data.data)}`);

  // After the window: the handset's last message was sent 25 hours ago, so its window closed an
  // hour ago; the answer is the 409 window_closed naming when. Until the gateway has recorded
  // that message, the 409 has no window_closed_at (the customer never wrote).
  const closed = "15551230102";
  await handsetWrites(simulatorURL, phoneNumberID, { from: closed, sent_seconds_ago: 25 * 3600 }, check);
  const lateBody: Schemas["SendMessageRequest"] = { destination: closed, type: "text", text: { body: "Still there?" } };
  let late = await live.POST("/messages", { body: lateBody });
  for (let i = 0; i < 50 && late.error !== undefined && late.error.code === "window_closed" && !("window_closed_at" in late.error); i++) {
    await pause();
    late = await live.POST("/messages", { body: lateBody });
  }
  check(late.response.status === 409 && late.error !== undefined, `an answer after the window: ${late.response.status}`);
  check(late.error.code === "window_closed", `409 code ${late.error.code}`);
  const closedAt = "window_closed_at" in late.error ? late.error.window_closed_at : undefined;
  const hourAgo = Date.now() - 3600_000;
  check(closedAt !== undefined && Math.abs(Date.parse(closedAt) - hourAgo) < 120_000, `window_closed_at ${closedAt}`);

  // A username-only sender: the platform shares only their user id; the answer names it.
  const userID = "US.77001234567890";
  await handsetWrites(simulatorURL, phoneNumberID, { from: "", user_id: userID, username: "ana.sdkcheck" }, check);
  const byIdBody: Schemas["SendMessageRequest"] = { user_id: userID, type: "text", text: { body: "Hi, how can we help?" } };
  let byId = await live.POST("/messages", { body: byIdBody });
  for (let i = 0; i < 50 && byId.response.status === 409; i++) {
    await pause();
    byId = await live.POST("/messages", { body: byIdBody });
  }
  check(byId.data !== undefined, `POST /messages to a user id: ${byId.response.status} ${JSON.stringify(byId.error)}`);
  const tpl = await live.POST("/messages/template", { body: { user_id: userID, template_name: "order_confirmation", body_variables: ["Ana", "ORD-1"] } });
  check(tpl.data !== undefined && tpl.data.data.contact_id === byId.data.data.contact_id,
    `POST /messages/template to a user id: ${tpl.response.status} ${JSON.stringify(tpl.error)}`);

  // The per-kind union: the example message.received, and an image as a receiver gets it.
  const examples = await live.GET("/events/examples");
  check(examples.data !== undefined, `GET /events/examples: ${examples.response.status}`);
  let example = "";
  for (const e of examples.data.data.events) {
    if (e.event === "message.received") example = kindSummary(e.data);
  }
  check(example.startsWith("text "), `the example message.received narrowed to ${example}`);
  const received: Schemas["MessageReceivedData"] = {
    message_id: 1003, conversation_id: 77, contact_id: 501, from: inside, name: "Ana", type: "image",
    image: { id: uploadedImage, mime_type: "image/png", sha256: "sha" },
  };
  check(kindSummary(received) === `image ${uploadedImage}`, `image narrowed to ${kindSummary(received)}`);
  return `text and an uploaded image answered inside the window, 409 window_closed at ${closedAt}, user id ${userID} answered, union narrowed (${example})`;
}
