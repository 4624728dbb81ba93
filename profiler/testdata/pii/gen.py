#!/usr/bin/env python3
"""Generates customers.csv and npm-tokens.csv: synthetic, seeded, no real person.

Run from this directory: python3 gen.py
"""
import csv
import random
import string

rng = random.Random(20261201)

FIRST = ["Maria", "James", "Aisha", "Lucas", "Sofia", "Hiroshi", "Olga", "Pedro", "Emma", "Rahul",
         "Zoltan", "Ingrid", "Kwame", "Chloe", "Mohammed", "Nadia", "Tomasz", "Grace", "Diego", "Yuki"]
LAST = ["Garcia", "Smith", "Okafor", "Schneider", "Rossi", "Tanaka", "Ivanova", "Silva", "Brown", "Sharma",
        "Kovacs", "Larsen", "Mensah", "Dubois", "Haddad", "Nowak", "O'Brien", "Lopez", "Sato", "van Dijk"]
DOMAINS = ["example.com", "example.org", "example.net", "mail.example"]
COUNTRIES = ["Germany", "France", "United Kingdom", "Spain", "Japan"]
PLANS = ["free", "pro", "team"]


def luhn_complete(prefix, length):
    digits = [int(c) for c in prefix]
    while len(digits) < length - 1:
        digits.append(rng.randrange(10))
    for check in range(10):
        d = digits + [check]
        s = 0
        for i, v in enumerate(reversed(d)):
            if i % 2 == 1:
                v *= 2
                if v > 9:
                    v -= 9
            s += v
        if s % 10 == 0:
            return "".join(map(str, d))


def card():
    n = luhn_complete(rng.choice(["4", "51", "55", "2221"]), 16)
    style = rng.randrange(3)
    if style == 0:
        return " ".join(n[i:i + 4] for i in range(0, 16, 4))
    if style == 1:
        return "-".join(n[i:i + 4] for i in range(0, 16, 4))
    return n


def iban():
    country, blen = rng.choice([("DE", 18), ("GB", 18), ("FR", 23)])
    if country == "GB":
        bban = "".join(rng.choice(string.ascii_uppercase) for _ in range(4)) + "".join(rng.choice(string.digits) for _ in range(14))
    else:
        bban = "".join(rng.choice(string.digits) for _ in range(blen))
    rearranged = bban + country + "00"
    num = int("".join(str(int(c, 36)) for c in rearranged))
    check = 98 - num % 97
    s = f"{country}{check:02d}{bban}"
    if rng.random() < 0.5:
        s = " ".join(s[i:i + 4] for i in range(0, len(s), 4))
    return s


def phone():
    style = rng.randrange(4)
    if style == 0:
        return f"+44 20 7946 {rng.randrange(1000):04d}"
    if style == 1:
        return f"(415) 555-01{rng.randrange(100):02d}"
    if style == 2:
        return f"+1-212-555-01{rng.randrange(100):02d}"
    return f"07700 900{rng.randrange(1000):03d}"


def ssn():
    while True:
        a, g, s = rng.randrange(1, 900), rng.randrange(1, 100), rng.randrange(1, 10000)
        if a != 666:
            return f"{a:03d}-{g:02d}-{s:04d}"


def ip():
    if rng.random() < 0.7:
        return f"10.{rng.randrange(256)}.{rng.randrange(256)}.{rng.randrange(1, 255)}"
    return "2001:db8:%x::%x" % (rng.randrange(65536), rng.randrange(1, 65536))


def token():
    return "npm_" + "".join(rng.choice(string.ascii_letters + string.digits) for _ in range(36))


def main():
    rows = []
    for i in range(60):
        first, last = rng.choice(FIRST), rng.choice(LAST)
        name = f"{first} {last}"
        email = f"{first.lower()}.{last.lower().replace(' ', '').replace(chr(39), '')}{i}@{rng.choice(DOMAINS)}"
        ph = phone()
        notes = rng.choice([
            "VIP", "Called back", "", "Prefers email", "Forward to billing@example.com",
            f"Reach at {email} after 5pm",
            f"Spoke with {name} about the invoice",
            f"Second number {ph}",
            f"Paid with {card()} then refunded",
            f"Order {rng.randrange(10000, 99999)} shipped",
        ])
        rows.append([1000 + i, name, email, ph, ssn(), card(), iban(), ip(), token(),
                     f"2024-{rng.randrange(1, 13):02d}-{rng.randrange(1, 29):02d}",
                     rng.choice(COUNTRIES), rng.choice(PLANS), f"{rng.uniform(0, 500):.2f}", notes])
    with open("customers.csv", "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["customer_id", "name", "email", "phone", "ssn", "card_number", "iban", "ip",
                    "api_token", "signup_date", "country", "plan", "balance", "notes"])
        w.writerows(rows)
    with open("npm-tokens.csv", "w", newline="") as f:
        for _ in range(25):
            f.write(token() + "\n")


main()
