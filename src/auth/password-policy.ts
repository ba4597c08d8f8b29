/**
 * Password rules, in one place (NIST SP 800-63B: a length floor, a block list of the most common
 * choices, no composition rules). Each refusal names the field and says what is allowed.
 */
import { ValidationError } from "../domain/index.js";

export const MIN_PASSWORD = 8;
export const MAX_PASSWORD = 256;

// The most common passwords of at least 8 characters in public breach lists; enough to refuse the
// first guesses of any attacker without shipping a dictionary.
const COMMON = new Set([
  "password", "password1", "password123", "passw0rd", "12345678", "123456789", "1234567890",
  "11111111", "00000000", "87654321", "qwertyui", "qwerty123", "qwertyuiop", "iloveyou",
  "abc12345", "abcd1234", "letmein1", "welcome1", "changeme", "sunshine", "football", "baseball",
  "princess", "trustno1", "superman", "1q2w3e4r", "admin123", "administrator",
]);

/** Throws ValidationError(`field`, …) when `password` may not be used by `username`. */
export function checkPassword(password: string, username: string, field = "password"): void {
  if (password.length < MIN_PASSWORD || password.length > MAX_PASSWORD) {
    throw new ValidationError(field, `must be ${MIN_PASSWORD} to ${MAX_PASSWORD} characters long (got ${password.length})`);
  }
  if (password.trim() === "") throw new ValidationError(field, "must not be only spaces");
  if (new Set(password).size === 1) throw new ValidationError(field, "must not be one character repeated");
  if (password.toLowerCase() === username.toLowerCase()) throw new ValidationError(field, "must not be the user name");
  if (COMMON.has(password.toLowerCase())) {
    throw new ValidationError(field, "is one of the most common passwords and would be guessed first; choose another (a few unrelated words work well)");
  }
}
