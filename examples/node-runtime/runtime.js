// An agent decider runtime for countersign in Node, on NATS alone: it takes
// review offers for one agent and answers them through the bus API.
// Usage: NATS_URL=nats://127.0.0.1:4222 COUNTERSIGN_TOKEN=dev-main \
//        TENANT=demo AGENT=agt_main node runtime.js
const { connect, headers } = require("nats");

const { NATS_URL, COUNTERSIGN_TOKEN: token, TENANT: tenant, AGENT: agent } = process.env;
const text = new TextDecoder();

async function main() {
  // The token may subscribe only below its own inbox prefix.
  const nc = await connect({ servers: NATS_URL, token, inboxPrefix: `_INBOX.${tenant}.agent.${agent}` });
  const sub = nc.subscribe(`countersign.${tenant}.review.${agent}`, { queue: "runtime" });
  console.log(`reviewing for ${agent} on ${sub.getSubject()}`);
  for await (const offer of sub) {
    if (offer.headers?.get("ce-type") !== "dev.countersign.review.requested") continue;
    offer.respond(); // an empty reply takes the review
    const { request } = JSON.parse(text.decode(offer.data));
    const small = (request.arguments.amount ?? Infinity) <= 5000;
    const h = headers();
    h.set("Authorization", `Bearer ${token}`);
    const body = { id: request.id, expected: request.revision, decision: small ? "allow" : "deny",
                   reason: small ? "Small refund for a confirmed duplicate." : "Too large for me to endorse." };
    const reply = await nc.request(`countersign.${tenant}.api.answer`, JSON.stringify(body), { headers: h, timeout: 5000 });
    const err = reply.headers?.get("Nats-Service-Error");
    const rec = JSON.parse(text.decode(reply.data));
    console.log(err ? `${request.id}: ${reply.headers.get("Nats-Service-Error-Code")} ${err}`
                    : `${request.id}: ${body.decision} -> status ${rec.status}, approver ${rec.approver?.id ?? "-"}`);
  }
}

main().catch((e) => { console.error(e); process.exit(1); });
