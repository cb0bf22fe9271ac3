/** Paths of the History API, enough for a few pages: `useLocation()` re-renders on every move. */
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

/** The path and the query (`?status=paid`): a filtered list keeps its filter in the address. */
export function useLocation(): { path: string; search: string } {
  const [where, setWhere] = useState({ path: location.pathname, search: location.search });
  useEffect(() => {
    const listener = () => setWhere({ path: location.pathname, search: location.search });
    listeners.add(listener);
    return () => void listeners.delete(listener);
  }, []);
  return where;
}

/** A plain click on a same-origin link moves in the app; a modified click (new tab) is the browser's. */
export function onLinkClick(event: MouseEvent): void {
  const anchor = event.currentTarget;
  if (!(anchor instanceof HTMLAnchorElement) || event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return;
  event.preventDefault();
  navigate(anchor.pathname + anchor.search);
}
