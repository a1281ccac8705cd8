// Drives the Vercel AI SDK (streamText over @ai-sdk/openai's Responses and Chat Completions models) against the
// gateway given as argv[2] with tool progress asked for; prints one JSON line with the streamed texts
// (tests/api_server/test_api_npm_clients.py). A stream part of type "error" is a failure.
import { createOpenAI } from "@ai-sdk/openai";
import { streamText } from "ai";

const [baseURL, model, prompt] = process.argv.slice(2);
const provider = createOpenAI({ baseURL, apiKey: "unused", headers: { "X-Hermes-Tool-Progress": "true" } });
const out = {};
for (const [name, languageModel] of [["responses", provider.responses(model)], ["chat", provider.chat(model)]]) {
  const result = streamText({ model: languageModel, prompt, maxRetries: 0 });
  let text = "";
  for await (const part of result.fullStream) {
    if (part.type === "error") throw part.error;
    if (part.type === "text-delta") text += part.text ?? part.textDelta ?? "";
  }
  out[name] = text;
}
console.log(JSON.stringify(out));
