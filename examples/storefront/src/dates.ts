/**
 * The one way the shop writes a moment (an order placed, a payment made, a parcel shipped), so
 * every page reads alike: "12 Mar 2026, 14:05" in the shopper's own time zone.
 */
const FORMAT = new Intl.DateTimeFormat('en-GB', { dateStyle: 'medium', timeStyle: 'short' });

export const formatTime = (iso: string): string => FORMAT.format(new Date(iso));
