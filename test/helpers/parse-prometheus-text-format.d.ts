// The package ships no types; this is the shape its parser answers (one entry per metric family).
declare module 'parse-prometheus-text-format' {
  interface ParsedFamily {
    name: string;
    help: string;
    type: 'COUNTER' | 'GAUGE' | 'HISTOGRAM' | 'SUMMARY' | 'UNTYPED';
    metrics: { value?: string; labels?: Record<string, string>; buckets?: Record<string, string>; count?: string; sum?: string }[];
  }
  export default function parsePrometheusTextFormat(text: string): ParsedFamily[];
}
