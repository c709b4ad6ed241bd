"""JavaScript shared by the page scripts that check decoded pictures by their content
(test_meeting_page's SOURCE_PIXELS, test_simulcast's PIXELS). Put before a script's body, it defines:

- `meanColour(d, w, h, x0, x1, y0, y1)`: the mean RGB of the part of an RGBA picture `d` (w x h pixels)
  between the fractions x0 and x1 of its width and y0 and y1 of its height;
- `sampleFrames(video, count, ms, measure)`: for each of up to `count` distinct presented frames of
  `video` (requestVideoFrameCallback), within `ms` milliseconds, draws the picture into a canvas a
  quarter of its size and keeps `measure(meta, d, w, h)` of it; returns `{frames, png}`, png being the
  last frame as a PNG data URL (null when no frame came).
"""

PICTURE_SAMPLER = """
const meanColour = (d, w, h, x0, x1, y0, y1) => {
  let sum = [0, 0, 0], n = 0;
  for (let y = Math.floor(h * y0); y < Math.ceil(h * y1); y++)
    for (let x = Math.floor(w * x0); x < Math.ceil(w * x1); x++) {
      const k = (y * w + x) * 4;
      sum[0] += d[k]; sum[1] += d[k + 1]; sum[2] += d[k + 2]; n++;
    }
  return sum.map((v) => Math.round(v / n));
};
const sampleFrames = async (video, count, ms, measure) => {
  const canvas = document.createElement("canvas");
  const g = canvas.getContext("2d", {willReadFrequently: true});
  const frames = [];
  const deadline = performance.now() + ms;
  let last = -1;
  while (frames.length < count && performance.now() < deadline) {
    const meta = await new Promise((resolve) => {
      const timer = setTimeout(() => resolve(null), 1000);
      video.requestVideoFrameCallback((now, m) => { clearTimeout(timer); resolve(m); });
    });
    if (!meta || meta.presentedFrames === last) continue;
    last = meta.presentedFrames;
    const w = canvas.width = Math.max(1, Math.round(video.videoWidth / 4));
    const h = canvas.height = Math.max(1, Math.round(video.videoHeight / 4));
    g.drawImage(video, 0, 0, w, h);
    frames.push(measure(meta, g.getImageData(0, 0, w, h).data, w, h));
  }
  return {frames, png: frames.length ? canvas.toDataURL("image/png") : null};
};
"""
