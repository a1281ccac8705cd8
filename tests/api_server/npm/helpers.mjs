// Drives the openai npm SDK's own stream helpers against the gateway given as argv[2] (base URL of /v1) and
// prints one JSON line with what they produced. Tool progress is asked for with the header, so the progress
// the gateway sends is in the streams these helpers read (tests/api_server/test_api_npm_clients.py).
import OpenAI from "openai";

const [baseURL, model, prompt] = process.argv.slice(2);
const client = new OpenAI({ baseURL, apiKey: "unused", maxRetries: 0,
                            defaultHeaders: { "X-Hermes-Tool-Progress": "true" } });
const out = {};
const responses = client.responses.stream({ model, input: prompt });
out.responses = (await responses.finalResponse()).output_text;
const chat = client.chat.completions.stream({ model, messages: [{ role: "user", content: prompt }] });
out.chat = (await chat.finalChatCompletion()).choices[0].message.content;
console.log(JSON.stringify(out));
