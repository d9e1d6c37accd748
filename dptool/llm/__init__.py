"""The one LLM client, over the `ollama` package (host from OLLAMA_HOST), and its versioned prompts (prompts/).

client (requests, retries, cache, usage per stage) · prompts/ (phrase, judge, rewrite, link, agent, dp).
The stages that use it live where their job is: generate (llm_phrase, judge, link), evaluate (agent), dp.
May import: dptool.errors only.
"""
