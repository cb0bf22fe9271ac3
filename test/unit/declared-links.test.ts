/**
 * Links one module declares on another's resource (server/lib/declared-links.ts): offered by the
 * resource's state, the same for every caller, documented as members of its `_links` schema.
 */
import { describe, expect, it } from 'vitest';
import { DeclaredLinks } from '../../server/lib/declared-links.ts';
import { orderLinks } from '../../server/modules/orders/orders.links.ts';
// Loading the router loads every module, and with it every module's declarations.
import '../../server/router.ts';

interface Box {
  id: number;
  open: boolean;
}

describe('declared links', () => {
  it('adds each declared link the target offers, in declaration order', () => {
    const links = new DeclaredLinks<Box>('box', ['self']);
    links.declare('contents', { method: 'GET', description: 'What is inside.', href: (_box, self) => `${self}/contents`, offered: (box) => box.open });
    links.declare('label', { method: 'GET', description: 'Its label.', href: (box) => `/labels/${box.id}` });
    expect(links.names()).toEqual(['contents', 'label']);
    expect(links.linksOf({ id: 3, open: true }, '/boxes/3')).toEqual({ contents: { href: '/boxes/3/contents', method: 'GET' }, label: { href: '/labels/3', method: 'GET' } });
    expect(links.linksOf({ id: 3, open: false }, '/boxes/3')).toEqual({ label: { href: '/labels/3', method: 'GET' } });
  });

  it('refuses a name declared twice, one the resource sets itself, and one that is no lower-case name', () => {
    const links = new DeclaredLinks<Box>('box', ['self']);
    const link = { method: 'GET', description: 'x', href: () => '/x' } as const;
    links.declare('contents', link);
    expect(() => links.declare('contents', link)).toThrow('link contents of box is declared twice');
    expect(() => links.declare('self', link)).toThrow('link self of box is declared twice');
    expect(() => links.declare('Contents', link)).toThrow('is not a lower-case name');
  });

  it('documents each declared link as a member of the schema, beside the members it has', () => {
    const links = new DeclaredLinks<Box>('box', ['self']);
    links.declare('contents', { method: 'GET', description: 'What is inside.', href: () => '/x' });
    const schema: Record<string, unknown> = { type: 'object', properties: { self: { $ref: '#/components/schemas/Link' } } };
    links.document(schema, { $ref: '#/components/schemas/Link' });
    expect(schema.properties).toEqual({ self: { $ref: '#/components/schemas/Link' }, contents: { $ref: '#/components/schemas/Link', description: 'What is inside.' } });
  });

  it('order notes declare `notes` on orders', () => {
    expect(orderLinks.names()).toContain('notes');
  });
});
