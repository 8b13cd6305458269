// Human-readable sizes and durations for log lines.
const UNITS = ["B", "KiB", "MiB", "GiB", "TiB"];

export function formatBytes(bytes, digits = 1) {
  if (!Number.isFinite(bytes) || bytes < 0) {
    throw new RangeError(`not a size: ${bytes}`);
  }
  let value = bytes;
  let unit = 0;
  while (value >= 1024 && unit < UNITS.length - 1) {
    value /= 1024;
    unit += 1;
  }
  return unit === 0 ? `${value} B` : `${value.toFixed(digits)} ${UNITS[unit]}`;
}

export function formatDuration(ms) {
  const seconds = Math.floor(ms / 1000);
  const parts = [];
  const hours = Math.floor(seconds / 3600);
  const minutes = Math.floor((seconds % 3600) / 60);
  if (hours) parts.push(`${hours}h`);
  if (minutes) parts.push(`${minutes}m`);
  parts.push(`${seconds % 60}s`);
  return parts.join(" ");
}
