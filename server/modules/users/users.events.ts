/** The events of users (docs/api.md#events). A password is never in one; a new password alone is a `user.updated` of `updated_at`. */
import { declareEvents } from '../../events/outbox.ts';
import type { User } from './users.schemas.ts';

export const userEvents = declareEvents({
  types: {
    'user.created': 'A user was created (registered, signed up, made by an admin, or the start-up admin).',
    'user.updated': 'A user changed; `previous_attributes` holds the old values.',
    'user.deleted': 'A user was deleted; `data.object` is the user as they were.',
  },
  orderIdOf: (_user: User) => null,
});
