# The pi-bench green server: an A2A server that assesses a purple agent on the bundled scenarios.
#   docker build -t pi-bench-green .
#   docker run -p 9009:9009 pi-bench-green --card-url http://green.example:9009
# The entrypoint listens on 0.0.0.0 inside the container (the container is the boundary); pass
# --card-url with the address callers use. An LLM user simulator (config.user_model) needs its
# provider key in the environment (e.g. -e OPENAI_API_KEY=...); the default scripted user needs none.
FROM python:3.11-slim

WORKDIR /app
COPY pyproject.toml README.md ./
COPY pytest_pibench ./pytest_pibench
COPY domains ./domains
COPY scenarios ./scenarios
COPY calibration ./calibration
RUN pip install --no-cache-dir ".[a2a,llm]" \
    && useradd --create-home --uid 10001 green
USER green

EXPOSE 9009
HEALTHCHECK --interval=30s --timeout=5s --start-period=20s --retries=3 \
    CMD python -c "import urllib.request; urllib.request.urlopen('http://127.0.0.1:9009/health', timeout=4)"
ENTRYPOINT ["pi-bench-green", "--host", "0.0.0.0", "--port", "9009"]
