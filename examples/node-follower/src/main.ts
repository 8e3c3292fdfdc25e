// A service in another language following a label through a promptpack relay
// (docs/relay.md) and rendering through the console's JSON API.
//
// It keeps, for each prompt it cares about, the arms the label points at
// (version and weight), from the relay's stream: a `snapshot` event, then a
// `change` event per prompt whose arms change. Rendering is the console's
// job (POST /api/v1/prompts/{id}/render), so the follower needs no template
// engine: it picks an arm by weight and asks for that version, so that what
// it renders is what it last heard from the relay, not whatever the label
// points at by the time the console reads it.
//
// Node 20's fetch and its body reader are the only things used: no
// dependency at run time.

interface Arm {
  version: number;
  weight: number;
  content_hash: string;
}

interface SnapshotEvent {
  label: string;
  event_id: string;
  prompts: { prompt: string; arms: Arm[] }[];
}

interface ChangeEvent {
  prompt: string;
  arms: Arm[];
}

interface Options {
  relay: string;
  console: string;
  token: string;
  label: string;
  prompts: string[];
  vars: Record<string, unknown>;
  once: boolean;
}

const USAGE = `usage: node dist/main.js --relay URL --console URL --label LABEL
       [--prompt ID]... [--vars JSON] [--once]
The token (a viewer's is enough) comes from $PROMPTPACK_TOKEN.
Without --prompt, every prompt of the label is followed.`;

function parseArgs(argv: string[]): Options {
  const options: Options = {
    relay: "",
    console: "",
    token: process.env.PROMPTPACK_TOKEN ?? "",
    label: "",
    prompts: [],
    vars: {},
    once: false,
  };
  for (let i = 0; i < argv.length; i++) {
    const flag = argv[i];
    const value = (): string => {
      const next = argv[++i];
      if (next === undefined) usage(`${flag} needs a value`);
      return next;
    };
    switch (flag) {
      case "--relay":
        options.relay = value().replace(/\/+$/, "");
        break;
      case "--console":
        options.console = value().replace(/\/+$/, "");
        break;
      case "--label":
        options.label = value();
        break;
      case "--prompt":
        options.prompts.push(value());
        break;
      case "--vars":
        options.vars = JSON.parse(value()) as Record<string, unknown>;
        break;
      case "--once":
        options.once = true;
        break;
      default:
        usage(`unknown argument ${flag}`);
    }
  }
  if (!options.relay || !options.console || !options.label) usage("--relay, --console and --label are needed");
  if (!options.token) usage("PROMPTPACK_TOKEN is not set");
  return options;
}

function usage(why: string): never {
  console.error(`node-follower: ${why}\n${USAGE}`);
  process.exit(2);
}

// --- Server-sent events -----------------------------------------------------

interface SseEvent {
  event: string;
  id: string | undefined;
  data: string;
}

// An incremental parser of the text/event-stream format: fed chunks of text as
// they arrive (a line may be split across chunks), it hands back whole events.
// `onActivity` hears every line, comments (`: ping`) included, which is what
// tells a quiet stream from a stalled one.
class SseParser {
  private buffer = "";
  private event = "";
  private id: string | undefined = undefined;
  private data: string[] = [];
  retry: number | undefined = undefined;

  constructor(private readonly onActivity: () => void) {}

  feed(chunk: string): SseEvent[] {
    this.buffer += chunk;
    const events: SseEvent[] = [];
    let newline: number;
    while ((newline = this.buffer.search(/\r\n|\r|\n/)) >= 0) {
      const line = this.buffer.slice(0, newline);
      const width = this.buffer.startsWith("\r\n", newline) ? 2 : 1;
      // A lone \r at the end of a chunk may be the first half of \r\n.
      if (width === 1 && this.buffer[newline] === "\r" && newline === this.buffer.length - 1) break;
      this.buffer = this.buffer.slice(newline + width);
      this.onActivity();
      const event = this.line(line);
      if (event) events.push(event);
    }
    return events;
  }

  private line(line: string): SseEvent | undefined {
    if (line === "") {
      if (this.data.length === 0) {
        this.event = "";
        return undefined;
      }
      const event = { event: this.event || "message", id: this.id, data: this.data.join("\n") };
      this.event = "";
      this.data = [];
      return event;
    }
    if (line.startsWith(":")) return undefined;
    const colon = line.indexOf(":");
    const field = colon < 0 ? line : line.slice(0, colon);
    let value = colon < 0 ? "" : line.slice(colon + 1);
    if (value.startsWith(" ")) value = value.slice(1);
    switch (field) {
      case "event":
        this.event = value;
        break;
      case "data":
        this.data.push(value);
        break;
      case "id":
        this.id = value;
        break;
      case "retry":
        if (/^\d+$/.test(value)) this.retry = Number(value);
        break;
    }
    return undefined;
  }
}

// --- Following --------------------------------------------------------------

// The relay pings every 5 s; three missed pings and the stream is stalled.
const STALL_MS = 15_000;
// The backoff of docs/relay.md: up to 1 s before the first attempt, then
// doubling up to 5 s, each wait drawn between half and all of it, so that the
// followers of a relay that restarts come back spread out.
const FIRST_WAIT_MS = 1_000;
const MOST_WAIT_MS = 5_000;

class Follower {
  private arms = new Map<string, Arm[]>();
  private lastEventId: string | undefined = undefined;

  constructor(private readonly options: Options) {}

  private cares(prompt: string): boolean {
    return this.options.prompts.length === 0 || this.options.prompts.includes(prompt);
  }

  async run(): Promise<void> {
    let attempt = 0;
    for (;;) {
      let heard = false;
      try {
        heard = await this.stream();
        console.log("stream: ended; reconnecting");
      } catch (error) {
        console.log(`stream: ${describe(error)}; reconnecting`);
      }
      // A stream that delivered events was healthy: start the backoff over.
      if (heard) attempt = 0;
      const ceiling = Math.min(FIRST_WAIT_MS * 2 ** attempt, MOST_WAIT_MS);
      const wait = attempt === 0 ? Math.random() * ceiling : ceiling * (0.5 + Math.random() / 2);
      attempt++;
      await sleep(wait);
    }
  }

  // One connection: reads events until the stream ends or stalls. Returns
  // whether any event arrived.
  private async stream(): Promise<boolean> {
    const { relay, label, token } = this.options;
    const abort = new AbortController();
    let stall: NodeJS.Timeout | undefined;
    const heardSomething = () => {
      clearTimeout(stall);
      stall = setTimeout(() => abort.abort(new Error("no event nor ping for 15 s: stalled")), STALL_MS);
    };
    heardSomething();
    const headers: Record<string, string> = {
      authorization: `Bearer ${token}`,
      accept: "text/event-stream",
    };
    if (this.lastEventId) headers["last-event-id"] = this.lastEventId;
    let heard = false;
    try {
      const response = await fetch(`${relay}/relay/v1/labels/${encodeURIComponent(label)}/events`, {
        headers,
        signal: abort.signal,
      });
      if (!response.ok || !response.body) {
        throw new Error(`relay answered ${response.status}: ${await response.text()}`);
      }
      const parser = new SseParser(heardSomething);
      const decoder = new TextDecoder();
      const reader = response.body.getReader();
      for (;;) {
        const { done, value } = await reader.read();
        if (done) return heard;
        for (const event of parser.feed(decoder.decode(value, { stream: true }))) {
          heard = true;
          await this.apply(event);
        }
      }
    } finally {
      clearTimeout(stall);
      abort.abort();
    }
  }

  private async apply(event: SseEvent): Promise<void> {
    if (event.event === "snapshot") {
      const snapshot = JSON.parse(event.data) as SnapshotEvent;
      this.arms.clear();
      for (const { prompt, arms } of snapshot.prompts) {
        if (this.cares(prompt)) this.arms.set(prompt, arms);
      }
      const shown = [...this.arms].map(([prompt, arms]) => `${prompt} ${showArms(arms)}`).join(", ");
      console.log(`snapshot: label=${snapshot.label} event=${event.id} ${shown || "(no prompt)"}`);
      this.lastEventId = event.id;
      if (this.options.once) {
        const wanted = this.options.prompts.length > 0 ? this.options.prompts : [...this.arms.keys()];
        let failed = false;
        for (const prompt of wanted) {
          if (!(await this.render(prompt))) failed = true;
        }
        process.exit(failed ? 1 : 0);
      }
      for (const prompt of this.arms.keys()) await this.render(prompt);
    } else if (event.event === "change") {
      const change = JSON.parse(event.data) as ChangeEvent;
      this.lastEventId = event.id;
      if (!this.cares(change.prompt)) return;
      if (change.arms.length === 0) {
        this.arms.delete(change.prompt);
        console.log(`change: ${change.prompt} left label=${this.options.label} event=${event.id}`);
        return;
      }
      this.arms.set(change.prompt, change.arms);
      console.log(`change: ${change.prompt} ${showArms(change.arms)} event=${event.id}`);
      await this.render(change.prompt);
    }
  }

  // Renders `prompt` through the console at an arm picked by weight. A
  // failed render is printed and the follower goes on: the console being
  // down does not stop it hearing the relay.
  private async render(prompt: string): Promise<boolean> {
    const arms = this.arms.get(prompt);
    if (!arms || arms.length === 0) {
      console.log(`render: ${prompt} failed: not under label ${this.options.label}`);
      return false;
    }
    const version = pick(arms);
    try {
      const response = await fetch(`${this.options.console}/api/v1/prompts/${encodeURIComponent(prompt)}/render`, {
        method: "POST",
        headers: { authorization: `Bearer ${this.options.token}`, "content-type": "application/json" },
        body: JSON.stringify({ version, vars: this.options.vars }),
      });
      const body = (await response.json()) as {
        version?: number;
        content_hash?: string;
        system?: string;
        error?: { code: string; message: string };
      };
      if (!response.ok) {
        console.log(`render: ${prompt} v${version} failed: ${response.status} ${body.error?.code}: ${body.error?.message}`);
        return false;
      }
      // The console gives the hash's hex; printed as the CLI prints hashes.
      const hash = body.content_hash?.startsWith("sha256:") ? body.content_hash : `sha256:${body.content_hash}`;
      console.log(
        `render: ${prompt} v${body.version} label=${this.options.label} ${hash} system=${body.system?.length ?? 0} chars`,
      );
      return true;
    } catch (error) {
      console.log(`render: ${prompt} v${version} failed: ${describe(error)}`);
      return false;
    }
  }
}

function showArms(arms: Arm[]): string {
  return arms.map((arm) => `v${arm.version}${arms.length > 1 ? `:${arm.weight}` : ""}`).join(",");
}

// An arm drawn with probability weight / total (the first when every weight is 0).
function pick(arms: Arm[]): number {
  const total = arms.reduce((sum, arm) => sum + arm.weight, 0);
  let draw = Math.random() * total;
  for (const arm of arms) {
    draw -= arm.weight;
    if (draw < 0) return arm.version;
  }
  return arms[0].version;
}

function describe(error: unknown): string {
  if (error instanceof Error) {
    const cause = error.cause instanceof Error ? `: ${error.cause.message}` : "";
    return `${error.message}${cause}`;
  }
  return String(error);
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

new Follower(parseArgs(process.argv.slice(2))).run().catch((error) => {
  console.error(`node-follower: ${describe(error)}`);
  process.exit(1);
});
