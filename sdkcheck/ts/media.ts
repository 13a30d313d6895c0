// The media steps of the TypeScript scenario (make sdkcheck): receive an image from the
// simulator's handset and fetch it through GET /media/{media_id}, checking its sha256; upload a
// file with POST /media and read it back.
import { createHash } from "node:crypto";
import type { Client } from "openapi-fetch";
import type { components, paths } from "./schema.js";

type Schemas = components["schemas"];
type Check = (ok: boolean, what: string) => asserts ok;

// A 16×16 PNG.
const png = Buffer.from(
  "iVBORw0KGgoAAAANSUhEUgAAABAAAAAQCAIAAACQkWg2AAAAIUlEQVR4nGJhYFggwMBAPGIBEaSAUQ2jGoaOBkAAAAD//4jaAsHcJKSLAAAAAElFTkSuQmCC",
  "base64",
);

const sha256 = (b: Uint8Array) => createHash("sha256").update(b).digest("hex");

// It returns what it did and the media id of the upload (the answer steps send it).
export async function mediaSteps(live: Client<paths>, simulatorURL: string, phoneNumberID: string, check: Check): Promise<{ summary: string; uploaded: string }> {
  // Receive an image: the simulator's handset sends one to the dev number (its control API says
  // which media id and sha256 the webhook carried), and the key's holder fetches the bytes.
  const sent = await fetch(`${simulatorURL}/_sim/inbound`, {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify({ phone_number_id: phoneNumberID, from: "15551234567", name: "Ana", type: "image", payload: { caption: "sdkcheck" } }),
  });
  check(sent.ok, `the simulator's handset did not send an image: ${sent.status}`);
  const injected = (await sent.json()) as { media_id: string; sha256: string };
  const image = await live.GET("/media/{media_id}", { params: { path: { media_id: injected.media_id } }, parseAs: "arrayBuffer" });
  check(image.data !== undefined, `GET /media/${injected.media_id}: ${image.response.status}`);
  const got = sha256(new Uint8Array(image.data));
  check(got === injected.sha256, `image sha256 ${got}, the handset sent ${injected.sha256}`);
  const digest = image.response.headers.get("Repr-Digest");
  check(digest === `sha-256=:${Buffer.from(injected.sha256, "hex").toString("base64")}:`, `Repr-Digest ${digest}`);
  check(image.response.headers.get("Content-Type") === "image/jpeg", "image Content-Type");

  // Upload a file for answers, then read it back.
  const up = await live.POST("/media", {
    // The schema's file is binary: the form is built here, with the file's name as the field.
    body: { file: "logo.png", type: "image/png" },
    bodySerializer: (b) => {
      const form = new FormData();
      form.append("type", b.type ?? "image/png");
      form.append("file", new Blob([png], { type: "image/png" }), b.file);
      return form;
    },
  });
  check(up.data !== undefined, `POST /media: ${up.response.status} ${JSON.stringify(up.error)}`);
  const uploaded: Schemas["MediaUploaded"] = up.data.data;
  check(uploaded.kind === "image" && uploaded.file_size === png.length && uploaded.sha256 === sha256(png), `upload ${JSON.stringify(uploaded)}`);
  const back = await live.GET("/media/{media_id}", { params: { path: { media_id: uploaded.media_id } }, parseAs: "arrayBuffer" });
  check(back.data !== undefined && Buffer.from(back.data).equals(png), `GET /media/${uploaded.media_id}: ${back.response.status}`);

  const wrong = await live.POST("/media", {
    body: { file: "anim.gif", type: "image/gif" },
    bodySerializer: (b) => {
      const form = new FormData();
      form.append("type", b.type ?? "");
      form.append("file", new Blob([png], { type: "image/gif" }), b.file);
      return form;
    },
  });
  check(wrong.response.status === 422 && wrong.error !== undefined, `a gif upload: ${wrong.response.status}`);
  return {
    summary: `image ${injected.media_id} fetched (${image.data.byteLength} bytes, sha256 checked), upload ${uploaded.media_id} read back, a gif refused`,
    uploaded: uploaded.media_id,
  };
}
