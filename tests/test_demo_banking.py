"""Tests of the Berka-shaped banking generator and of the converter of Berka's real files (small scales)."""

from __future__ import annotations

import calendar
import csv
import io
import re
import shutil
from collections import Counter, defaultdict
from datetime import date, timedelta
from decimal import Decimal
from pathlib import Path

import pytest

from dptool.demo import banking
from dptool.errors import DptoolError
from tests.conftest import REPO, run_cli

SCALE = 0.2  # 72 accounts, ~18k transactions
FIXTURE = Path(__file__).parent / "fixtures" / "berka"

# The headers of Berka's .asc files, in order.
EXPECTED_COLUMNS = {
    "account": ["account_id", "district_id", "frequency", "date"],
    "client": ["client_id", "birth_number", "district_id"],
    "disp": ["disp_id", "client_id", "account_id", "type"],
    "trans": ["trans_id", "account_id", "date", "type", "operation", "amount", "balance", "k_symbol", "bank",
              "account"],
    "order": ["order_id", "account_id", "bank_to", "account_to", "amount", "k_symbol"],
    "loan": ["loan_id", "account_id", "date", "amount", "duration", "payments", "status"],
    "card": ["card_id", "disp_id", "type", "issued"],
    "district": [f"A{i}" for i in range(1, 17)],
}
TRANS_TYPES = {"PRIJEM", "VYDAJ", "VYBER"}
OPERATIONS = {"VYBER KARTOU", "VKLAD", "PREVOD Z UCTU", "VYBER", "PREVOD NA UCET", ""}
TRANS_SYMBOLS = {"POJISTNE", "SLUZBY", "UROK", "SANKC. UROK", "SIPO", "DUCHOD", "UVER", "", " "}
ORDER_SYMBOLS = {"POJISTNE", "SIPO", "LEASING", "UVER", " "}
FREQUENCIES = {"POPLATEK MESICNE", "POPLATEK TYDNE", "POPLATEK PO OBRATU"}
REGIONS = {"Prague", "central Bohemia", "south Bohemia", "west Bohemia", "north Bohemia", "east Bohemia",
           "south Moravia", "north Moravia"}
MONEY = re.compile(r"^-?\d+\.\d{2}$")


def _date(yymmdd: str) -> date:
    assert re.fullmatch(r"9[3-8]\d{4}", yymmdd), yymmdd
    return date(1900 + int(yymmdd[:2]), int(yymmdd[2:4]), int(yymmdd[4:6]))  # raises if not a real date


def _read(path: Path) -> list[dict]:
    with open(path, encoding="utf-8", newline="") as f:
        return list(csv.DictReader(f))


@pytest.fixture(scope="module")
def tables() -> dict[str, list[dict]]:
    return banking.generate(SCALE, seed=7)


@pytest.fixture(scope="module")
def default_tables() -> dict[str, list[dict]]:
    """What `dptool demo-data --domain banking` writes (scale 1, seed 42)."""
    return banking.generate(1.0, seed=42)


def _csv_bytes(name: str, rows: list[dict]) -> bytes:
    buf = io.StringIO(newline="")
    writer = csv.writer(buf, lineterminator="\n", quoting=csv.QUOTE_MINIMAL)
    writer.writerow(EXPECTED_COLUMNS[name])
    writer.writerows([row[c] for c in EXPECTED_COLUMNS[name]] for row in rows)
    return buf.getvalue().encode("utf-8")


@pytest.fixture(scope="module")
def csv_dir(tmp_path_factory):
    out = tmp_path_factory.mktemp("banking")
    banking.write_csvs(out, SCALE, seed=7)
    return out


def test_tables_columns_and_seed_names():
    assert tuple(EXPECTED_COLUMNS) == banking.TABLES
    assert {t: list(c) for t, c in banking.COLUMNS.items()} == EXPECTED_COLUMNS
    assert {t: f"berka_{t}" for t in EXPECTED_COLUMNS} == banking.SEEDS


def test_csv_headers_format_and_read_back(tables, csv_dir):
    for name in banking.TABLES:
        assert (csv_dir / f"berka_{name}.csv").read_bytes() == _csv_bytes(name, tables[name])
    assert sorted(p.name for p in csv_dir.iterdir()) == sorted(f"berka_{t}.csv" for t in EXPECTED_COLUMNS)
    for name, columns in EXPECTED_COLUMNS.items():
        data = (csv_dir / f"berka_{name}.csv").read_bytes()
        assert b"\r" not in data and data.endswith(b"\n")
        assert data.decode("utf-8").split("\n", 1)[0] == ",".join(columns)
        assert _read(csv_dir / f"berka_{name}.csv") == tables[name], name


def test_same_scale_and_seed_give_identical_bytes(tmp_path):
    first = banking.write_csvs(tmp_path / "a", 0.05, seed=123)
    second = banking.write_csvs(tmp_path / "b", 0.05, seed=123)
    assert first == second
    for name in banking.TABLES:
        assert (tmp_path / "a" / f"berka_{name}.csv").read_bytes() == \
            (tmp_path / "b" / f"berka_{name}.csv").read_bytes()
    banking.write_csvs(tmp_path / "c", 0.05, seed=124)
    assert (tmp_path / "a" / "berka_trans.csv").read_bytes() != (tmp_path / "c" / "berka_trans.csv").read_bytes()


def test_committed_seeds_are_the_default_output(default_tables, csv_dir):
    """seeds/banking is exactly `dptool demo-data --domain banking` (scale 1, seed 42), at CI size."""
    for name in banking.TABLES:
        committed = REPO / "seeds" / "banking" / f"berka_{name}.csv"
        assert committed.read_bytes() == _csv_bytes(name, default_tables[name]), name
    assert len(default_tables["account"]) == 360 and len(default_tables["district"]) == 77
    assert 80_000 < len(default_tables["trans"]) <= 100_000
    assert sum(p.stat().st_size for p in (REPO / "seeds" / "banking").iterdir()) < 7_000_000


@pytest.mark.parametrize("scale", [0.05, 0.1, 0.2])
def test_row_counts_scale(scale):
    t = banking.generate(scale)
    n = round(banking.ACCOUNTS_PER_SCALE * scale)
    quota = lambda share: int(n * share + 0.5)  # noqa: E731
    assert len(t["account"]) == n
    assert len(t["district"]) == 77
    assert len(t["client"]) == len(t["disp"])  # one disposition per client, as in Berka
    assert Counter(d["type"] for d in t["disp"])["OWNER"] == n
    assert len(t["loan"]) == quota(banking._LOAN_SHARE)  # the demo lends more than Berka's 682 / 4500
    assert len(t["card"]) == quota(banking._CARD_SHARE)  # and issues more cards than Berka's 892 / 4500
    assert 150 * n < len(t["trans"]) < 350 * n  # Berka: ~235 a account
    assert 0.8 * n < len(t["order"]) < 2.5 * n  # Berka: 1.44 a account


def test_dates_are_valid_yymmdd_integers(tables):
    for table in ("account", "loan", "trans"):
        for row in tables[table]:
            assert date(1993, 1, 1) <= _date(row["date"]) <= date(1998, 12, 31), (table, row)
    for card in tables["card"]:
        assert re.fullmatch(r"\d{6} 00:00:00", card["issued"])
        _date(card["issued"][:6])
    assert {r["date"][:2] for r in tables["account"]} == {"93", "94", "95", "96", "97"}


def test_birth_numbers_encode_sex_in_the_month(tables):
    female = 0
    for client in tables["client"]:
        bn = client["birth_number"]
        assert re.fullmatch(r"\d{6}", bn)
        month = int(bn[2:4])
        assert 1 <= month <= 12 or 51 <= month <= 62, bn
        year, true_month = 1900 + int(bn[:2]), month - 50 if month > 50 else month
        assert 1 <= int(bn[4:]) <= calendar.monthrange(year, true_month)[1], bn
        female += month > 50
    assert 0.3 < female / len(tables["client"]) < 0.7


def test_codes_are_berkas_czech_codes(tables):
    trans = tables["trans"]
    assert {r["type"] for r in trans} == TRANS_TYPES
    assert {r["operation"] for r in trans} == OPERATIONS
    assert {r["k_symbol"] for r in trans} <= TRANS_SYMBOLS
    assert {"UROK", "SLUZBY", "SIPO", "DUCHOD", "UVER", "POJISTNE", "", " "} <= {r["k_symbol"] for r in trans}
    assert {r["k_symbol"] for r in tables["order"]} <= ORDER_SYMBOLS
    assert {r["frequency"] for r in tables["account"]} <= FREQUENCIES
    assert {r["type"] for r in tables["disp"]} == {"OWNER", "DISPONENT"}
    assert {r["type"] for r in tables["card"]} <= {"junior", "classic", "gold"}
    assert {r["status"] for r in tables["loan"]} <= {"A", "B", "C", "D"}
    for r in trans:
        assert MONEY.match(r["amount"]) and MONEY.match(r["balance"]) and Decimal(r["amount"]) > 0
        assert (r["operation"] == "") == (r["k_symbol"] == "UROK")  # the bank's own posting has no mode
        assert bool(r["bank"]) == (r["operation"] in ("PREVOD Z UCTU", "PREVOD NA UCET")) == bool(r["account"])
        assert (r["type"] == "PRIJEM") == (r["operation"] in ("VKLAD", "PREVOD Z UCTU", ""))


def test_district_is_berkas(tables):
    districts = tables["district"]
    assert [int(d["A1"]) for d in districts] == list(range(1, 78))
    assert {d["A3"] for d in districts} == REGIONS
    assert districts[0]["A2"] == "Hl.m. Praha" and districts[0]["A4"] == "1204953"
    missing = [(d["A1"], c) for d in districts for c in EXPECTED_COLUMNS["district"] if d[c] == "?"]
    assert missing == [("69", "A12"), ("69", "A15")]


def test_referential_integrity(tables):
    accounts = {r["account_id"]: r for r in tables["account"]}
    clients = {r["client_id"]: r for r in tables["client"]}
    disps = {r["disp_id"]: r for r in tables["disp"]}
    districts = {r["A1"] for r in tables["district"]}
    for table, key in (("account", "account_id"), ("client", "client_id"), ("disp", "disp_id"),
                       ("trans", "trans_id"), ("order", "order_id"), ("loan", "loan_id"), ("card", "card_id")):
        assert len({r[key] for r in tables[table]}) == len(tables[table]), table
    assert {r["district_id"] for r in accounts.values()} <= districts
    assert {r["district_id"] for r in clients.values()} <= districts
    assert {d["client_id"] for d in disps.values()} == set(clients)  # every client has a disposition
    assert {d["account_id"] for d in disps.values()} == set(accounts)
    owners = Counter(d["account_id"] for d in disps.values() if d["type"] == "OWNER")
    assert set(owners.values()) == {1}
    assert {r["account_id"] for r in tables["trans"]} == set(accounts)  # every account has transactions
    assert {r["account_id"] for r in tables["order"]} <= set(accounts)
    loans = Counter(r["account_id"] for r in tables["loan"])
    assert set(loans) <= set(accounts) and set(loans.values()) == {1}
    for card in tables["card"]:
        assert disps[card["disp_id"]]["type"] == "OWNER"


def test_balances_follow_the_transactions(tables):
    accounts = {r["account_id"]: r for r in tables["account"]}
    by_account = defaultdict(list)
    for r in tables["trans"]:
        by_account[r["account_id"]].append(r)
    for account_id, rows in by_account.items():
        rows.sort(key=lambda r: int(r["trans_id"]))
        assert rows[0]["operation"] == "VKLAD" and rows[0]["date"] == accounts[account_id]["date"]
        balance = Decimal(0)
        for r in rows:
            balance += Decimal(r["amount"]) * (1 if r["type"] == "PRIJEM" else -1)
            assert Decimal(r["balance"]) == balance, r
        assert [r["date"] for r in rows] == sorted(r["date"] for r in rows)  # ids follow time


def test_interest_is_credited_at_every_month_end(tables):
    months_open = {}
    for a in tables["account"]:
        opened = _date(a["date"])
        months_open[a["account_id"]] = (1998 - opened.year) * 12 + 12 - opened.month + 1
    credited = defaultdict(set)
    for r in tables["trans"]:
        if r["k_symbol"] in ("UROK", "SANKC. UROK"):
            d = _date(r["date"])
            assert d.day == calendar.monthrange(d.year, d.month)[1], r  # posted on the last day of a month
            credited[r["account_id"]].add(r["date"][:4])
    for account_id, n in months_open.items():
        assert len(credited[account_id]) >= 0.9 * n, account_id
    fees = [r for r in tables["trans"] if r["k_symbol"] == "SLUZBY"]
    assert {r["amount"] for r in fees} <= {"14.60", "58.40", "73.00"}  # per statement; 4-5 a month if weekly


def test_cards_follow_account_opening(tables):
    disps = {r["disp_id"]: r for r in tables["disp"]}
    opened = {r["account_id"]: _date(r["date"]) for r in tables["account"]}
    born = {r["client_id"]: 1900 + int(r["birth_number"][:2]) for r in tables["client"]}
    for card in tables["card"]:
        disp = disps[card["disp_id"]]
        assert _date(card["issued"][:6]) >= opened[disp["account_id"]] + timedelta(days=203)
        assert (card["type"] == "junior") == (born[disp["client_id"]] >= 1974)


def test_loans_are_berka_shaped(tables):
    opened = {r["account_id"]: _date(r["date"]) for r in tables["account"]}
    repayments = {(o["account_id"], o["amount"]) for o in tables["order"] if o["k_symbol"] == "UVER"}
    for loan in tables["loan"]:
        granted = _date(loan["date"])
        assert granted >= opened[loan["account_id"]] + timedelta(days=102)
        assert loan["duration"] in {"12", "24", "36", "48", "60"}
        assert Decimal(loan["amount"]) == int(loan["duration"]) * Decimal(loan["payments"])
        assert re.fullmatch(r"\d+", loan["amount"])  # a whole number of CZK, as in Berka
        months = granted.year * 12 + granted.month - 1 + int(loan["duration"])
        finished = (months // 12, months % 12 + 1) <= (1998, 12)
        assert (loan["status"] in "AB") == finished, loan  # A/B finished, C/D running at the end of 1998
        assert (loan["account_id"], loan["payments"]) in repayments  # the standing order that repays it


def test_status_mix_and_the_1997_downturn(default_tables):
    t = default_tables
    status = Counter(r["status"] for r in t["loan"])
    finished, running = status["A"] + status["B"], status["C"] + status["D"]
    assert status["B"] == int(finished * banking._B_SHARE + 0.5)
    assert status["D"] == int(running * banking._D_SHARE + 0.5)
    assert status["C"] > status["A"] > status["B"] and status["A"] > status["D"]  # Berka's order

    region = {r["A1"]: r["A3"] for r in t["district"]}
    account_region = {a["account_id"]: region[a["district_id"]] for a in t["account"]}
    balance, penalties = defaultdict(list), Counter()
    for r in t["trans"]:
        north = account_region[r["account_id"]] == "north Moravia"
        half = r["date"][:2] + ("H1" if r["date"][2:4] <= "06" else "H2")
        balance[north, half].append(float(r["balance"]))
        penalties[north, half] += r["k_symbol"] == "SANKC. UROK"
    mean = {k: sum(v) / len(v) for k, v in balance.items()}
    # North Moravia's balances fall through the second half of 1997 and the first of 1998; elsewhere they don't.
    assert mean[True, "98H1"] < 0.8 * mean[True, "97H1"]
    assert mean[False, "98H1"] > 0.95 * mean[False, "97H1"]
    assert penalties[True, "98H1"] > 3 * max(1, penalties[True, "96H1"])


def _age(birth_number: str, yymmdd: str) -> int:
    born = int(birth_number) - (5000 if int(birth_number[2:4]) > 50 else 0)
    return (int(yymmdd) - born) // 10000


def _running_in_the_downturn(loan: dict) -> bool:
    """Granted by 30 June 1998, last instalment due in July 1997 or later (the crisis rule's loans)."""
    month = int(loan["date"][:2]) * 12 + int(loan["date"][2:4])
    return loan["date"] <= "980630" and month + int(loan["duration"]) >= 97 * 12 + 7


def test_the_facts_the_rules_bite_on(default_tables):
    """The committed seeds hold what each rule needs to change its metrics in the usual slices."""
    t = default_tables
    region = {r["A1"]: r["A3"] for r in t["district"]}
    account_region = {a["account_id"]: region[a["district_id"]] for a in t["account"]}
    loans, cards = t["loan"], t["card"]
    # loans: enough to rank and compare, in every region and year, with loans in trouble everywhere
    assert len(loans) >= 150 and len(cards) >= 150
    by_region = Counter(account_region[ln["account_id"]] for ln in loans)
    assert set(by_region) == REGIONS and min(by_region.values()) >= 20
    assert sum(n >= 40 for n in by_region.values()) >= 3, by_region
    assert {"19" + ln["date"][:2] for ln in loans} == {str(y) for y in range(1993, 1999)}
    assert all(n >= 20 for y, n in Counter(ln["date"][:2] for ln in loans).items())
    assert {account_region[ln["account_id"]] for ln in loans if ln["status"] in "BD"} == REGIONS
    assert any(ln["date"] >= "980101" for ln in loans)  # young loans (cohort maturity)
    # the 1997 floods: north Moravia's loans running through the downturn, granted before it, in trouble
    flooded = [ln for ln in loans if account_region[ln["account_id"]] == "north Moravia"
               and _running_in_the_downturn(ln) and ln["status"] in "BD"]
    assert sum(ln["date"] < "970701" for ln in flooded) >= 5
    assert {"B", "D"} <= {ln["status"] for ln in flooded if ln["date"] < "970701"}
    # cards: junior cards of holders under 18 (minor protection) and of holders already 18 (junior limit)
    disp = {d["disp_id"]: d for d in t["disp"]}
    birth = {c["client_id"]: c["birth_number"] for c in t["client"]}
    ages = [(c["type"], _age(birth[disp[c["disp_id"]]["client_id"]], c["issued"][:6])) for c in cards]
    assert sum(kind == "junior" and age < 18 for kind, age in ages) >= 10
    assert sum(kind == "junior" and age >= 18 for kind, age in ages) >= 10
    assert all(kind == "junior" for kind, age in ages if age < 18)
    assert Counter(kind for kind, _ in ages)["gold"] >= 10
    cards_by_region = Counter(account_region[disp[c["disp_id"]]["account_id"]] for c in cards)
    assert sum(n >= 30 for n in cards_by_region.values()) >= 4, cards_by_region
    # transactions and orders
    trans = t["trans"]
    large_cash = Counter(account_region[r["account_id"]] for r in trans
                         if r["operation"] == "VYBER" and Decimal(r["amount"]) >= 30000)
    assert set(large_cash) == REGIONS and min(large_cash.values()) >= 20, large_cash
    penalties = {r["date"][:2] for r in trans if r["k_symbol"] == "SANKC. UROK"}
    assert penalties & {"93", "94", "95"} and penalties & {"96", "97", "98"}
    assert {"QR", "ST"} <= {r["bank"] for r in trans}
    assert "LEASING" in {o["k_symbol"] for o in t["order"]}
    largest = defaultdict(Decimal)
    for o in t["order"]:
        largest[o["account_id"]] = max(largest[o["account_id"]], Decimal(o["amount"]))
    assert any(v < 100 for v in largest.values())  # an account whose standing orders are all placeholders


def test_rejects_non_positive_scale():
    with pytest.raises(ValueError):
        banking.generate(0)


# --- the real files -> the same seed CSVs ---------------------------------------------------------------

def test_convert_the_original_asc_files(tmp_path):
    counts = banking.convert(FIXTURE, tmp_path)
    assert counts == {"account": 3, "client": 4, "disp": 4, "trans": 12, "order": 3, "loan": 1, "card": 2,
                      "district": 3}
    for name, columns in EXPECTED_COLUMNS.items():
        data = (tmp_path / f"berka_{name}.csv").read_bytes()
        assert b"\r" not in data and data.decode().split("\n", 1)[0] == ",".join(columns)
    trans = _read(tmp_path / "berka_trans.csv")
    assert trans[1] == {"trans_id": "207264", "account_id": "704", "date": "930101", "type": "PRIJEM",
                        "operation": "VKLAD", "amount": "1000.00", "balance": "1000.00", "k_symbol": "",
                        "bank": "", "account": ""}
    assert trans[5]["k_symbol"] == " " and trans[5]["account"] == "24485939"  # the blank code is kept
    assert trans[6]["operation"] == "" and trans[6]["k_symbol"] == "UROK"
    assert trans[10]["type"] == "VYBER" and trans[10]["balance"] == "-98.80"
    assert _read(tmp_path / "berka_client.csv")[0] == {"client_id": "1", "birth_number": "706213", "district_id": "1"}
    assert _read(tmp_path / "berka_order.csv")[1]["k_symbol"] == " "
    assert _read(tmp_path / "berka_card.csv")[0]["issued"] == "931107 00:00:00"
    jesenik = _read(tmp_path / "berka_district.csv")[1]
    assert (jesenik["A2"], jesenik["A3"], jesenik["A12"], jesenik["A15"]) == ("Jesenik", "north Moravia", "?", "?")
    assert _read(tmp_path / "berka_loan.csv") == [{"loan_id": "5314", "account_id": "3818", "date": "970705",
                                                   "amount": "40464", "duration": "12", "payments": "3372.00",
                                                   "status": "B"}]


def test_parquet_round_trip_gives_the_same_bytes(tmp_path):
    """Typed parquet (as the real Berka parquet files are typed) converts back to identical seed CSVs."""
    duckdb = pytest.importorskip("duckdb")
    banking.write_csvs(tmp_path / "seeds", 0.05, seed=3)
    types = {"account": {"date": "BIGINT"}, "client": {"birth_number": "BIGINT"},
             "trans": {"date": "BIGINT", "amount": "DOUBLE", "balance": "DOUBLE", "account": "BIGINT"},
             "order": {"account_to": "BIGINT", "amount": "DOUBLE"},
             "loan": {"date": "BIGINT", "amount": "BIGINT", "payments": "DOUBLE"},
             "card": {"issued": "VARCHAR"}, "disp": {}, "district": {"A10": "DOUBLE", "A12": "VARCHAR",
                                                                     "A13": "DOUBLE", "A15": "VARCHAR"}}
    (tmp_path / "parquet").mkdir()
    con = duckdb.connect()
    for name in banking.TABLES:
        src, dst = tmp_path / "seeds" / f"berka_{name}.csv", tmp_path / "parquet" / f"{name}.parquet"
        # Berka's column order is not required: the converter reorders (here: reversed).
        cols = ", ".join(f'"{c}"' for c in reversed(EXPECTED_COLUMNS[name]))
        con.execute(f"copy (select {cols} from read_csv('{src}', header=true, types={types[name]!r})) "
                    f"to '{dst}' (format parquet)")
    banking.convert(tmp_path / "parquet", tmp_path / "back")
    for name in banking.TABLES:
        assert (tmp_path / "back" / f"berka_{name}.csv").read_bytes() == \
            (tmp_path / "seeds" / f"berka_{name}.csv").read_bytes(), name


def test_convert_reads_comma_csv_with_iso_dates(tmp_path):
    src = tmp_path / "src"
    shutil.copytree(FIXTURE, src)
    (src / "account.asc").unlink()
    (src / "account.csv").write_text("account_id,district_id,frequency,date\n576,1,POPLATEK MESICNE,1993-01-01\n",
                                     encoding="utf-8")
    banking.convert(src, tmp_path / "out")
    assert _read(tmp_path / "out" / "berka_account.csv") == [
        {"account_id": "576", "district_id": "1", "frequency": "POPLATEK MESICNE", "date": "930101"}]


def test_convert_errors_name_the_table_and_leave_the_output_alone(tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    (out / "berka_trans.csv").write_text("old\n", encoding="utf-8")
    src = tmp_path / "src"
    shutil.copytree(FIXTURE, src)
    (src / "trans.asc").unlink()
    with pytest.raises(DptoolError, match="no file for table.*trans"):
        banking.convert(src, out)
    (src / "trans_SAMPLE_100rows.asc").write_bytes((FIXTURE / "trans.asc").read_bytes())  # a single trans_* file
    (src / "card.asc").write_text('"card_id";"disp_id";"kind"\r\n1;1;"gold"\r\n', encoding="utf-8")
    with pytest.raises(DptoolError, match=r"card.asc: not Berka's card table, columns type, issued are missing"):
        banking.convert(src, out)
    assert sorted(p.name for p in out.iterdir()) == ["berka_trans.csv"]
    assert (out / "berka_trans.csv").read_text(encoding="utf-8") == "old\n"


def test_cli_demo_data_banking(tmp_path):
    proc = run_cli("demo-data", "--domain", "banking", "--scale", "0.02", "--out", str(tmp_path / "gen"))
    assert proc.returncode == 0, proc.stderr
    assert "berka_trans.csv" in proc.stdout and len(list((tmp_path / "gen").glob("berka_*.csv"))) == 8
    proc = run_cli("demo-data", "--domain", "banking", "--from", str(FIXTURE), "--out", str(tmp_path / "real"))
    assert proc.returncode == 0, proc.stderr
    assert "12 rows" in proc.stdout and (tmp_path / "real" / "berka_trans.csv").is_file()
    proc = run_cli("demo-data", "--from", str(FIXTURE), "--out", str(tmp_path / "nope"))
    assert proc.returncode == 1 and proc.stderr.startswith("error: --from") and "Traceback" not in proc.stderr
    assert not (tmp_path / "nope").exists()
