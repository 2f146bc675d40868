#!/usr/bin/env python3
"""Measures the CPU cost per received SSE chunk of a minimal single-process
asyncio streaming client (standard library only, so it is a lower bound for
aiohttp-based clients such as vLLM's bench), against a running simserver.
This is how the reproduction chooses loadgen's --client-cost for its
emulated single-process client.
  measure_asyncio_cost.py PORT [REQUESTS] [CONCURRENCY] [MAX_TOKENS]"""
import asyncio, json, sys, time

PORT = int(sys.argv[1])
REQUESTS = int(sys.argv[2]) if len(sys.argv) > 2 else 2000
CONC = int(sys.argv[3]) if len(sys.argv) > 3 else 64
MAX_TOKENS = int(sys.argv[4]) if len(sys.argv) > 4 else 16
BODY = json.dumps({"model": "sim-model", "prompt": "a b c d e f g h i j k l m n o p",
                   "max_tokens": MAX_TOKENS, "stream": True,
                   "stream_options": {"include_usage": True}}).encode()
REQ = (b"POST /v1/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
       b"Content-Length: " + str(len(BODY)).encode() + b"\r\n\r\n" + BODY)
chunks = 0


async def one_conn(n):
    global chunks
    reader, writer = await asyncio.open_connection("127.0.0.1", PORT)
    for _ in range(n):
        writer.write(REQ)
        await writer.drain()
        chunked = False
        while True:  # headers
            line = await reader.readline()
            if line.lower().startswith(b"transfer-encoding: chunked"):
                chunked = True
            if line in (b"\r\n", b""):
                break
        assert chunked, "expected a chunked SSE response"
        done = False
        while not done:
            size = int((await reader.readline()).strip(), 16)
            if size == 0:
                await reader.readline()
                break
            payload = await reader.readexactly(size + 2)
            for ev in payload[:-2].split(b"\n\n"):
                if not ev.startswith(b"data: "):
                    continue
                data = ev[6:]
                t = time.perf_counter()  # what a benchmark records per token
                if data == b"[DONE]":
                    done = True
                    continue
                obj = json.loads(data)
                if obj.get("choices"):
                    _ = obj["choices"][0].get("text")
                chunks += 1
                _ = t
        while done and size != 0:  # consume the terminating chunk
            size = int((await reader.readline()).strip(), 16)
            if size == 0:
                await reader.readline()
            else:
                await reader.readexactly(size + 2)
    writer.close()


async def main():
    per = REQUESTS // CONC
    await asyncio.gather(*(one_conn(per) for _ in range(CONC)))


cpu0, wall0 = time.process_time(), time.perf_counter()
asyncio.run(main())
cpu, wall = time.process_time() - cpu0, time.perf_counter() - wall0
print(json.dumps({"requests": (REQUESTS // CONC) * CONC, "chunks": chunks, "cpu_s": cpu, "wall_s": wall,
                  "cpu_us_per_chunk": 1e6 * cpu / max(chunks, 1),
                  "python": sys.version.split()[0]}))
