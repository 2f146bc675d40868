#!/usr/bin/env python3
"""Helpers of the report's browser test (standard library only).

  report_dom.py dom FILE    what a browser's rendered DOM (chromium --dump-dom)
                            or the page itself shows: the verdict, the knee,
                            the per-stage rows, the inline SVGs, the elements
                            that would run or fetch something, and the server
                            metrics section (its plot's marks, tick labels and
                            knee line, its table, or its note), as JSON on stdout
  report_dom.py png FILE W H  checks a screenshot: a PNG of W x H pixels with
                            a real page on it (many colours, not mostly blank);
                            prints its figures as JSON, exit 1 if it fails
"""
import json
import struct
import sys
import zlib
from html.parser import HTMLParser


class Dom(HTMLParser):
    def __init__(self):
        super().__init__()
        self.stack = []  # (tag, id, class)
        self.out = {"verdict": "", "knee": "", "rows": [], "svgs": 0, "figures_with_svg": 0,
                    "active": {}, "title": "",
                    "server": {"figure": False, "svgs": 0, "points": [], "ticks": {"x": [], "y": [], "y2": []},
                               "knee_x": None, "rows": [], "note": None}}
        self.row = None
        self.cell = None
        self.in_figure = False
        self.srv_text = None  # the tick label or mark title being read
        self.srow = None
        self.scell = None

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag in ("script", "img", "iframe", "object", "embed", "link", "image"):
            self.out["active"][tag] = self.out["active"].get(tag, 0) + 1
        for k, v in a.items():
            if k.startswith("on"):
                self.out["active"]["on-attribute"] = self.out["active"].get("on-attribute", 0) + 1
        if tag == "svg":
            self.out["svgs"] += 1
            if self.in_figure:
                self.out["figures_with_svg"] += 1
        if tag == "figure":
            self.in_figure = True
        if tag == "tr" and "data-stage" in a and self.inside("table", "stages"):
            self.row = {"stage": a["data-stage"], "cells": {}}
        if tag == "td" and self.row is not None:
            self.cell = a.get("class") or ""
            self.row["cells"].setdefault(self.cell, "")
        self.server_start(tag, a)
        self.stack.append((tag, a.get("id"), a.get("class")))

    def server_start(self, tag, a):
        """The server metrics section: its SVG's marks (each one's centre as
        drawn), its tick labels at their places, its knee line, its table."""
        srv = self.out["server"]
        if tag == "figure" and a.get("id") == "plot-server_metrics":
            srv["figure"] = True
        if tag == "p" and a.get("id") == "server-metrics-note":
            srv["note"] = ""
            self.srv_text = ("note", None)
        if tag == "svg" and a.get("class") == "server-metrics":
            srv["svgs"] += 1
        if not any(t == "svg" and c == "server-metrics" for t, _, c in self.stack + [(tag, None, a.get("class"))]):
            if tag == "tr" and "data-stage" in a and self.inside("table", "server-metrics-table"):
                self.srow = {"stage": int(a["data-stage"]), "class": a.get("class") or "", "cells": {}}
            if tag == "td" and self.srow is not None:
                self.scell = a.get("class") or ""
                self.srow["cells"][self.scell] = ""
            return
        cls = a.get("class") or ""
        if tag == "text" and cls in ("xtick", "ytick", "y2tick"):
            pos = float(a["x"] if cls == "xtick" else a["y"])
            self.srv_text = ("tick", {"axis": cls[:-4], "pos": pos, "text": ""})
        if tag == "line" and cls == "knee":
            srv["knee_x"] = float(a["x1"])
        if cls == "pt":
            if tag == "circle":
                cx, cy = float(a["cx"]), float(a["cy"])
            else:
                cx = float(a["x"]) + float(a["width"]) / 2
                cy = float(a["y"]) + float(a["height"]) / 2
            srv["points"].append({"series": a["data-series"], "stage": int(a["data-stage"]),
                                  "x": float(a["data-x"]), "value": float(a["data-value"]),
                                  "cx": cx, "cy": cy, "title": ""})
        if tag == "title" and srv["points"] and self.stack and self.stack[-1][2] == "pt":
            self.srv_text = ("title", srv["points"][-1])

    def handle_endtag(self, tag):
        if tag == "figure":
            self.in_figure = False
        if self.srv_text is not None and tag in ("text", "title", "p"):
            kind, obj = self.srv_text
            if kind == "tick" and tag == "text":
                self.out["server"]["ticks"][obj["axis"]].append([float(obj["text"]), obj["pos"]])
            if (kind, tag) in (("tick", "text"), ("title", "title"), ("note", "p")):
                self.srv_text = None
        if tag == "td":
            self.scell = None
        if tag == "tr" and self.srow is not None:
            self.out["server"]["rows"].append(self.srow)
            self.srow = None
        if tag == "td":
            self.cell = None
        if tag == "tr" and self.row is not None:
            self.out["rows"].append(self.row)
            self.row = None
        while self.stack:
            t = self.stack.pop()
            if t[0] == tag:
                break

    def inside(self, tag, ident):
        return any(t == tag and i == ident for t, i, _ in self.stack)

    def handle_data(self, data):
        if self.stack and self.stack[-1][1] == "verdict-value":
            self.out["verdict"] += data
        if self.stack and self.stack[-1][1] == "knee-value":
            self.out["knee"] += data
        if self.stack and self.stack[-1][0] == "title" and not self.inside("svg", None) \
                and not any(t == "svg" for t, _, _ in self.stack):
            self.out["title"] += data
        if self.row is not None and self.cell is not None:
            self.row["cells"][self.cell] += data
        if self.srv_text is not None:
            kind, obj = self.srv_text
            if kind == "note":
                self.out["server"]["note"] += data
            else:
                obj["text" if kind == "tick" else "title"] += data
        if self.srow is not None and self.scell is not None:
            self.srow["cells"][self.scell] += data


def dom(path):
    p = Dom()
    with open(path, encoding="utf-8") as f:
        p.feed(f.read())
    o = p.out
    o["rows"] = [{"stage": int(r["stage"]), "completed": int(r["cells"].get("completed", "-1") or -1),
                  "failed": int(r["cells"].get("failed", "-1") or -1)} for r in o["rows"]]
    json.dump(o, sys.stdout)


def paeth(a, b, c):
    p = a + b - c
    pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
    return a if pa <= pb and pa <= pc else (b if pb <= pc else c)


def png(path, want_w, want_h):
    with open(path, "rb") as f:
        data = f.read()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        print(json.dumps({"error": "not a PNG"}))
        return 1
    pos, idat, w = 8, b"", None
    while pos < len(data):
        n, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + n]
        if kind == b"IHDR":
            w, h, depth, ctype = struct.unpack(">IIBB", body[:10])
        elif kind == b"IDAT":
            idat += body
        pos += 12 + n
    if w is None or depth != 8 or ctype not in (2, 6):
        print(json.dumps({"error": "unexpected PNG format", "depth": depth, "colour_type": ctype}))
        return 1
    bpp = 3 if ctype == 2 else 4
    raw = zlib.decompress(idat)
    stride = w * bpp
    prev = bytearray(stride)
    colours, nonwhite, sampled = set(), 0, 0
    for y in range(h):
        ft = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        if ft == 1:
            for i in range(bpp, stride):
                line[i] = (line[i] + line[i - bpp]) & 255
        elif ft == 2:
            line = bytearray((x + p) & 255 for x, p in zip(line, prev))
        elif ft == 3:
            for i in range(stride):
                line[i] = (line[i] + ((line[i - bpp] if i >= bpp else 0) + prev[i]) // 2) & 255
        elif ft == 4:
            for i in range(stride):
                a = line[i - bpp] if i >= bpp else 0
                c = prev[i - bpp] if i >= bpp else 0
                line[i] = (line[i] + paeth(a, prev[i], c)) & 255
        prev = line
        if y % 4 == 0:  # every 4th row, every 4th pixel: plenty to judge by
            for x in range(0, w, 4):
                px = bytes(line[x * bpp:x * bpp + 3])
                colours.add(px)
                sampled += 1
                if px != b"\xff\xff\xff":
                    nonwhite += 1
    share = nonwhite / sampled if sampled else 0.0
    out = {"width": w, "height": h, "colours": len(colours), "nonwhite_share": round(share, 4)}
    print(json.dumps(out))
    ok = w == want_w and h == want_h and len(colours) >= 16 and share >= 0.02
    return 0 if ok else 1


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "dom":
        dom(sys.argv[2])
    elif len(sys.argv) == 5 and sys.argv[1] == "png":
        sys.exit(png(sys.argv[2], int(sys.argv[3]), int(sys.argv[4])))
    else:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
