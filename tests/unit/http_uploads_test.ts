import assert from "node:assert/strict";
import { readUploadRequest } from "../../lib/http/uploads.ts";
import type { FileUploadsConfig } from "../../lib/config/types.ts";
import type { RouterError } from "../../lib/errors.ts";
import { JsonTooDeep } from "../../lib/http/graphql_request.ts";

const CONFIG = { enabled: true, max_file_size: 1_000, max_files: 10 } as FileUploadsConfig;
const LIMITS = { approximateDepth: 100, totalFields: 1_000 };

function form(operations: string, map: string): Request {
  const body = `--b\r\ncontent-disposition: form-data; name="operations"\r\n\r\n${operations}\r\n` +
    `--b\r\ncontent-disposition: form-data; name="map"\r\n\r\n${map}\r\n--b--\r\n`;
  return new Request("http://router.test/graphql", { method: "POST", body });
}

function read(request: Request, maxFieldBytes = 5_000_000) {
  return readUploadRequest(request, "b", { config: CONFIG, limits: LIMITS, maxFieldBytes });
}

Deno.test("uploads: many map paths into one list fill each placeholder (the list copied once)", async () => {
  // 20 000 paths into a list of 20 000: copying the list once a path was 4e8 element copies.
  const n = 20_000;
  const list = `[${Array(n).fill("null").join(",")}]`;
  const paths = Array.from({ length: n }, (_, i) => `"variables.files.${i}"`).join(",");
  const upload = await read(
    form(
      `{"query":"mutation($files:[Upload!]!){up(files:$files)}","variables":{"files":${list}}}`,
      `{"0":[${paths}]}`,
    ),
  );
  const files = upload.raw.variables?.files as unknown[];
  assert.equal(files.length, n);
  assert.ok(files.every((value) => value === "0"));
  await upload.close();
});

Deno.test("uploads: a map path through an inherited name (__proto__, toString), a list's length or a slot not sent is a 400", async () => {
  for (
    const path of [
      "variables.__proto__.x",
      "variables.file.__proto__.x",
      "variables.toString",
      "variables.list.length", // RangeError: Invalid array length (a 500)
      "variables.list.1",
      "variables.file.nope",
    ]
  ) {
    await assert.rejects(
      read(
        form(
          '{"query":"mutation($file:Upload){up(file:$file)}","variables":{"file":{},"list":[null]}}',
          `{"x":["${path}"]}`,
        ),
      ),
      (error: RouterError) => error.code === "BAD_REQUEST",
      path,
    );
  }
});

Deno.test("uploads: a map nested past the depth limit is refused before it is parsed", async () => {
  const depth = 1_000;
  await assert.rejects(
    read(
      form(
        '{"query":"mutation($file:Upload){up(file:$file)}","variables":{"file":null}}',
        `{"0":${"[".repeat(depth)}${"]".repeat(depth)}}`,
      ),
    ),
    (error: JsonTooDeep) =>
      error instanceof JsonTooDeep && error.error.extensions?.code === "MAX_DEPTH_EXCEEDED",
  );
});

Deno.test("uploads: the operations and map fields are each held to max_request_body_bytes", async () => {
  const operations = '{"query":"mutation($file:Upload){up(file:$file)}","variables":{"file":null}}';
  const map = '{"0":["variables.file"]}';
  const limit = operations.length;
  const upload = await read(form(operations, map), limit);
  await upload.close();
  for (
    const [request, field] of [
      [form(`${operations}${" ".repeat(100)}`, map), "operations"],
      [form(operations, `${map}${" ".repeat(limit)}`), "map"],
    ] as const
  ) {
    await assert.rejects(
      read(request, limit),
      (error: RouterError) =>
        error.code === "PAYLOAD_TOO_LARGE" &&
        error.message.includes(`"${field}" field is larger than ${limit} bytes`),
      field,
    );
  }
});
