/** Paths of the History API, enough for five pages: `usePath()` re-renders on every move. */
import { useEffect, useState } from 'preact/hooks';

const listeners = new Set<() => void>();
const notify = () => {
  for (const listener of listeners) listener();
};
addEventListener('popstate', notify);

export function navigate(path: string, options: { replace?: boolean } = {}): void {
  if (options.replace) history.replaceState(null, '', path);
  else history.pushState(null, '', path);
  scrollTo(0, 0);
  notify();
}

export function usePath(): string {
  const [path, setPath] = useState(location.pathname);
  useEffect(() => {
    const listener = () => setPath(location.pathname);
    listeners.add(listener);
    return () => void listeners.delete(listener);
  }, []);
  return path;
}

/** A plain click on a same-origin link moves in the app; a modified click (new tab) is the browser's. */
export function onLinkClick(event: MouseEvent): void {
  const anchor = event.currentTarget;
  if (!(anchor instanceof HTMLAnchorElement) || event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return;
  event.preventDefault();
  navigate(anchor.pathname + anchor.search);
}
