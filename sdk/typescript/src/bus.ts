// An agent decider on the bus (SPEC §9, "Agent deciders on the bus"), with
// npm nats (an optional peer dependency): take the review offers for one
// agent and answer them through the bus API.
import { connect, headers, type NatsConnection, type Msg } from "nats";
import { CountersignError } from "./errors.js";
import type { AnswerBody, RequestRecord } from "./types.js";

export interface BusOptions {
  /** the NATS URL(s) countersign serve prints (nats_listen) */
  servers: string | string[];
  /** the agent's countersign token, used as its NATS token; default COUNTERSIGN_TOKEN */
  token?: string;
  tenant: string;
  /** the agent whose reviews to take */
  agent: string;
  /** the queue group the agent's runtime processes share (default "runtime") */
  queue?: string;
}

/** The review bundle: the request and what the decider knows (nothing else of its history). */
export interface ReviewBundle {
  request: RequestRecord;
  decider: { id: string; role?: string; memory?: string; brief?: string };
}

export interface Review extends ReviewBundle {
  /** answers the request at the revision offered (api.answer); a refusal throws CountersignError */
  answer(a: Omit<AnswerBody, "expected"> & { expected?: number }): Promise<RequestRecord>;
}

const text = new TextDecoder();

/** The bus API of one token: request/reply on countersign.<tenant>.api.<op>. */
export class Bus {
  private constructor(
    readonly nc: NatsConnection,
    readonly o: BusOptions & { token: string },
  ) {}

  static async connect(o: BusOptions): Promise<Bus> {
    const token = o.token ?? process.env.COUNTERSIGN_TOKEN ?? "";
    // Replies reach a client only under its own inbox prefix.
    const nc = await connect({ servers: o.servers, token, inboxPrefix: `_INBOX.${o.tenant}.agent.${o.agent}` });
    return new Bus(nc, { ...o, token });
  }

  /** one bus API call; the HTTP body of the answer, or a CountersignError */
  async call(op: string, body: Record<string, unknown>, timeoutMs = 10_000): Promise<unknown> {
    const h = headers();
    h.set("Authorization", `Bearer ${this.o.token}`);
    const reply = await this.nc.request(`countersign.${this.o.tenant}.api.${op}`, JSON.stringify(body), { headers: h, timeout: timeoutMs });
    const data = reply.data.length ? JSON.parse(text.decode(reply.data)) : undefined;
    const code = reply.headers?.get("Nats-Service-Error-Code");
    if (code) throw new CountersignError(Number(code), data ?? { error: reply.headers?.get("Nats-Service-Error") });
    return data;
  }

  answer(id: string, a: AnswerBody): Promise<RequestRecord> {
    return this.call("answer", { id, ...a }) as Promise<RequestRecord>;
  }

  /**
   * The review offers for the agent, each taken (an empty reply) as it is
   * yielded. Delivery is at least once: answer with the offered revision
   * (the default), and a duplicate is harmless.
   */
  async *reviews(): AsyncGenerator<Review> {
    const sub = this.nc.subscribe(`countersign.${this.o.tenant}.review.${this.o.agent}`, { queue: this.o.queue ?? "runtime" });
    for await (const offer of sub as AsyncIterable<Msg>) {
      if (offer.headers?.get("ce-type") !== "dev.countersign.review.requested") continue;
      offer.respond(); // takes the review
      const bundle = JSON.parse(text.decode(offer.data)) as ReviewBundle;
      yield {
        ...bundle,
        answer: (a) => this.answer(bundle.request.id, { expected: bundle.request.revision, ...a }),
      };
    }
  }

  async close(): Promise<void> {
    await this.nc.drain();
  }
}
