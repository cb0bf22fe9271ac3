/**
 * Links one module adds to another module's resource (docs/architecture.md#adding-a-module):
 * order notes add `notes` to every order's `_links` without the orders module naming them. The
 * owning module keeps one `DeclaredLinks` per resource; its representation adds what is
 * declared, its `_links` schema admits them (`catchall`) and documents each (`document`). Like
 * the other catalogues, read it only at run time, never while modules are still loading.
 */

export type LinkMethod = 'GET' | 'POST';

export interface LinkDeclaration<Target> {
  readonly method: LinkMethod;
  /** What the link leads to, for the OpenAPI document (who may follow it, when it is offered). */
  readonly description: string;
  /** The target's path; `self` is the resource's own (`/api/v1/orders/17`). */
  href(target: Target, self: string): string;
  /** Whether the resource offers it now (default: always). The same for every caller. */
  offered?(target: Target): boolean;
}

/** A `_links` member as the API answers it. */
export interface Link {
  href: string;
  method: LinkMethod;
}

export class DeclaredLinks<Target> {
  private readonly declarations = new Map<string, LinkDeclaration<Target>>();

  /** `resource` names what the links are on, for errors: `order`. `builtIn`: the names its own representation sets. */
  constructor(
    private readonly resource: string,
    private readonly builtIn: readonly string[],
  ) {}

  /** Adds a link; a name declared twice, or one the resource sets itself, is a programming error. */
  declare(name: string, declaration: LinkDeclaration<Target>): void {
    if (this.declarations.has(name) || this.builtIn.includes(name)) throw new Error(`link ${name} of ${this.resource} is declared twice`);
    if (!/^[a-z]+(-[a-z]+)*$/.test(name)) throw new Error(`link ${name} of ${this.resource} is not a lower-case name`);
    this.declarations.set(name, declaration);
  }

  /** The names declared, in declaration order. */
  names(): string[] {
    return [...this.declarations.keys()];
  }

  /** The declared links `target` offers now, by name, in declaration order. */
  linksOf(target: Target, self: string): Record<string, Link> {
    const links: Record<string, Link> = {};
    for (const [name, declaration] of this.declarations) {
      if (declaration.offered?.(target) ?? true) links[name] = { href: declaration.href(target, self), method: declaration.method };
    }
    return links;
  }

  /**
   * The `_links` JSON Schema with each declared link as a documented member (a zod-openapi
   * `override`, run when the document is built, after every module has declared its links).
   */
  document(jsonSchema: Record<string, unknown>, linkSchema: Record<string, unknown>): void {
    const properties = (jsonSchema.properties ??= {}) as Record<string, unknown>;
    for (const [name, declaration] of this.declarations) properties[name] = { ...linkSchema, description: declaration.description };
  }
}
