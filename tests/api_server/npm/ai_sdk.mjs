// Drives the Vercel AI SDK (streamText over @ai-sdk/openai's Responses and Chat Completions models) against the
// gateway given as argv[2] with tool progress asked for; prints one JSON line with the streamed texts
// (tests/api_server/test_api_npm_clients.py). A stream part of type "error" is a failure. Then a client tool
// call through each model: how many tool-input-delta parts the SDK saw (the arguments streamed, issue 34). Then
// structured output through each model: generateObject's object, and streamObject's partial objects and final one.
import { createOpenAI } from "@ai-sdk/openai";
import { generateObject, jsonSchema, streamObject, streamText, tool } from "ai";

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
const tools = { get_weather: tool({ description: "the weather in a city",
  inputSchema: jsonSchema({ type: "object", properties: { city: { type: "string" } }, required: ["city"] }) }) };
for (const [name, languageModel] of [["responses", provider.responses(model)], ["chat", provider.chat(model)]]) {
  const result = streamText({ model: languageModel, prompt: "Use get_weather for Paris", tools, maxRetries: 0 });
  let deltas = 0;
  for await (const part of result.fullStream) {
    if (part.type === "error") throw part.error;
    if (part.type === "tool-input-delta") deltas += 1;
  }
  out[`${name}_tool_input_deltas`] = deltas;
}
const schema = jsonSchema({ type: "object", properties: { name: { type: "string" }, population: { type: "integer" } },
  required: ["name", "population"], additionalProperties: false });
for (const [name, languageModel] of [["responses", provider.responses(model)], ["chat", provider.chat(model)]]) {
  const generated = await generateObject({ model: languageModel, schema, prompt: "Oslo", maxRetries: 0 });
  out[`${name}_object`] = generated.object;
  const streamed = streamObject({ model: languageModel, schema, prompt: "Oslo", maxRetries: 0,
    onError: ({ error }) => { throw error; } });
  let partials = 0;
  for await (const _ of streamed.partialObjectStream) partials += 1;
  out[`${name}_streamed_object`] = await streamed.object;
  out[`${name}_partial_objects`] = partials;
}
console.log(JSON.stringify(out));
